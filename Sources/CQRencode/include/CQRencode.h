// CQRencode: Debian's libqrencode (libqrencode-dev) for Swift. QRcode_encodeString, QRcode_free
// and the QRcode struct import as they are; wrappers (named CQRencode_<original>) would go here
// only for macros Swift cannot import. No logic lives here.
#ifndef CQRENCODE_H
#define CQRENCODE_H

#include <qrencode.h>

#endif
