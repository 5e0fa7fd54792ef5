/*
 * <adstore/query.h>: the statement language.
 *
 * Programs include <adstore/NAME.h> with $(pkg-config --cflags adstore).
 * The declarations are in query/query.h, installed under include/adstore/ in
 * the source tree's layout, so this relative include finds it installed; in
 * the source tree the repository root is on the include path.
 */
#ifndef ADSTORE_QUERY_H
#define ADSTORE_QUERY_H

#include "query/query.h"

#endif
