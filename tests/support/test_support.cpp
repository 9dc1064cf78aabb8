// Shared helpers for tests.
#include "support/test_support.h"
