/*
 * <adstore/buf.h>: growable byte buffers.
 *
 * Programs include <adstore/NAME.h> with $(pkg-config --cflags adstore).
 * The declarations are in base/buf.h, installed under include/adstore/ in
 * the source tree's layout, so this relative include finds it installed; in
 * the source tree the repository root is on the include path.
 */
#ifndef ADSTORE_BUF_H
#define ADSTORE_BUF_H

#include "base/buf.h"

#endif
