// SwiftPM builds a C target from its sources; libqrencode needs no wrappers today, so this file
// only includes the header.
#include "CQRencode.h"
