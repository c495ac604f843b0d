// CSystem has no wrappers; SwiftPM needs one source file in a C target.
#include "CSystem.h"
