/* dlmap GPU check — the name lookups as gpu/re2c_standin.py writes them, under other names (standin_*), so that
 * //gpu:re2c_standin_test can ask them and re2c's (in the library) the same questions in one program. */
#define dlmap_device_type_parse standin_device_type_from_name
#define dlmap_platform_parse standin_platform_from_name
#define dlmap_dtype_parse standin_dtype_from_name
#define dlmap__platform_from_words standin_platform_from_words
#include "gpu/standin/name_lookup_standin.c.inc"
