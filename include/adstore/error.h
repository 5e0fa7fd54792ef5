/*
 * <adstore/error.h>: the one error type (ads_error) and ads_strerror.
 *
 * Programs include <adstore/NAME.h> with $(pkg-config --cflags adstore).
 * The declarations are in base/error.h, installed under include/adstore/ in
 * the source tree's layout, so this relative include finds it installed; in
 * the source tree the repository root is on the include path.
 */
#ifndef ADSTORE_ERROR_H
#define ADSTORE_ERROR_H

#include "base/error.h"

#endif
