#include "CWireLinux.h"
