// The plaintext system SQLite (libsqlite3-dev). Used only by tests and test helpers, which link
// it on purpose to prove that SqlCipherKit's calls never reach it.
#include <sqlite3.h>
