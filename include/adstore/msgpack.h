/*
 * <adstore/msgpack.h>: ClassAd values and records as MessagePack bytes.
 *
 * Programs include <adstore/NAME.h> with $(pkg-config --cflags adstore).
 * The declarations are in classad/msgpack.h, installed under include/adstore/ in
 * the source tree's layout, so this relative include finds it installed; in
 * the source tree the repository root is on the include path.
 */
#ifndef ADSTORE_MSGPACK_H
#define ADSTORE_MSGPACK_H

#include "classad/msgpack.h"

#endif
