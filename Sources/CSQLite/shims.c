#include "CSQLite.h"

sqlite3_destructor_type CSQLite_SQLITE_TRANSIENT(void) { return SQLITE_TRANSIENT; }
