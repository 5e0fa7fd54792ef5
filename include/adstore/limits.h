/*
 * <adstore/limits.h>: every limit adstore enforces.
 *
 * Programs include <adstore/NAME.h> with $(pkg-config --cflags adstore).
 * The declarations are in base/limits.h, installed under include/adstore/ in
 * the source tree's layout, so this relative include finds it installed; in
 * the source tree the repository root is on the include path.
 */
#ifndef ADSTORE_LIMITS_H
#define ADSTORE_LIMITS_H

#include "base/limits.h"

#endif
