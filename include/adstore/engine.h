/*
 * <adstore/engine.h>: the store: records, timelines, scans, bulk, dumps.
 *
 * Programs include <adstore/NAME.h> with $(pkg-config --cflags adstore).
 * The declarations are in engine/engine.h, installed under include/adstore/ in
 * the source tree's layout, so this relative include finds it installed; in
 * the source tree the repository root is on the include path.
 */
#ifndef ADSTORE_ENGINE_H
#define ADSTORE_ENGINE_H

#include "engine/engine.h"

#endif
