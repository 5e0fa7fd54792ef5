/*
 * <adstore/idgen.h>: identifiers: OUIDs, UUIDs, LUIDs, FLUIDs, k-ordered ids.
 *
 * Programs include <adstore/NAME.h> with $(pkg-config --cflags adstore).
 * The declarations are in idgen/idgen.h, installed under include/adstore/ in
 * the source tree's layout, so this relative include finds it installed; in
 * the source tree the repository root is on the include path.
 */
#ifndef ADSTORE_IDGEN_H
#define ADSTORE_IDGEN_H

#include "idgen/idgen.h"

#endif
