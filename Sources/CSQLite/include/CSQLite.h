// CSQLite: Debian's libsqlite3 for Swift, plus one-line wrappers (named CSQLite_<original>) for
// the macros Swift cannot import. No logic lives here.
#ifndef CSQLITE_H
#define CSQLITE_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is `((sqlite3_destructor_type)-1)`: a cast Swift cannot import. It tells
// sqlite3_bind_* and sqlite3_result_* to copy the bytes before the call returns.
sqlite3_destructor_type CSQLite_SQLITE_TRANSIENT(void);

#endif
