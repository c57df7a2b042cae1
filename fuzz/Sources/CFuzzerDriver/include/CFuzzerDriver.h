#ifndef C_FUZZER_DRIVER_H
#define C_FUZZER_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's documented entry for programs that provide their own main: runs the fuzzing loop (or the given
/// inputs) with `callback` as the target. Defined by the runtime linked in with -sanitize=fuzzer.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
