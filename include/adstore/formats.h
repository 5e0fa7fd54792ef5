/*
 * <adstore/formats.h>: records as long, JSON, XML and ClassAd text.
 *
 * Programs include <adstore/NAME.h> with $(pkg-config --cflags adstore).
 * The declarations are in classad/formats.h, installed under include/adstore/ in
 * the source tree's layout, so this relative include finds it installed; in
 * the source tree the repository root is on the include path.
 */
#ifndef ADSTORE_FORMATS_H
#define ADSTORE_FORMATS_H

#include "classad/formats.h"

#endif
