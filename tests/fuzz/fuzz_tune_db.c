/* The tuning database parser on raw bytes (header, trailer, checksum, then
 * the records of whatever passes). */
#include "tune_db_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    parse_and_check((const char *)data, size);
    return 0;
}
