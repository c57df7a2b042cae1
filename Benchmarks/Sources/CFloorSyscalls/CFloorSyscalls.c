// A C target needs one source file; the header is all CrossingFloor uses.
#include "CFloorSyscalls.h"
