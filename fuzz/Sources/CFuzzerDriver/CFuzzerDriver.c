// Header-only module: LLVMFuzzerRunDriver lives in libFuzzer's runtime. SwiftPM needs one source file per C target.
#include "CFuzzerDriver.h"
