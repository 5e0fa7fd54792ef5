/*
 * <adstore/classad.h>: the ClassAd language: values, expressions, records.
 *
 * Programs include <adstore/NAME.h> with $(pkg-config --cflags adstore).
 * The declarations are in classad/classad.h, installed under include/adstore/ in
 * the source tree's layout, so this relative include finds it installed; in
 * the source tree the repository root is on the include path.
 */
#ifndef ADSTORE_CLASSAD_H
#define ADSTORE_CLASSAD_H

#include "classad/classad.h"

#endif
