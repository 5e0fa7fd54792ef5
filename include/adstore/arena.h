/*
 * <adstore/arena.h>: arenas: region allocation.
 *
 * Programs include <adstore/NAME.h> with $(pkg-config --cflags adstore).
 * The declarations are in base/arena.h, installed under include/adstore/ in
 * the source tree's layout, so this relative include finds it installed; in
 * the source tree the repository root is on the include path.
 */
#ifndef ADSTORE_ARENA_H
#define ADSTORE_ARENA_H

#include "base/arena.h"

#endif
