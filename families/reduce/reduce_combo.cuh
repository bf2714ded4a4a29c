// Sets the current (operator, type) combination from ROP, RTYPE and
// R_SUFFIX, then includes the family's REDUCE_BODY for it when the compile
// selected it (ONLY_OP / ONLY_TYPE). Included once per combination by
// reduce_each.cuh, so it has no include guard: it ends by undefining
// everything it and the caller defined.
#if REDUCE_SELECTED(ROP, RTYPE)

#if RTYPE == RT_INT32
#define rT int
#define R_ELEM_BYTES 4
#elif RTYPE == RT_UINT32
#define rT unsigned
#define R_ELEM_BYTES 4
#elif RTYPE == RT_INT64
#define rT long long
#define R_ELEM_BYTES 8
#elif RTYPE == RT_UINT64
#define rT unsigned long long
#define R_ELEM_BYTES 8
#elif RTYPE == RT_FLOAT32
#define rT float
#define R_ELEM_BYTES 4
#elif RTYPE == RT_FLOAT64
#define rT double
#define R_ELEM_BYTES 8
#else
#error "unknown RTYPE"
#endif

// R_IDENTITY: the value that changes nothing, written for padding lanes and
// empty inputs. R_REDUX: the sm_80 warp reduction instruction (redux.sync)
// for 32-bit integers, where one exists for the operator.
#if ROP == RO_SUM
#define r_combine rop_sum
#define R_IDENTITY ((rT)0)
#define R_REDUX __reduce_add_sync
#elif ROP == RO_MIN
#define r_combine rop_min
#define R_REDUX __reduce_min_sync
#if RTYPE == RT_INT32
#define R_IDENTITY ((int)0x7fffffff)
#elif RTYPE == RT_UINT32
#define R_IDENTITY 0xffffffffu
#elif RTYPE == RT_FLOAT32
#define R_IDENTITY __int_as_float(0x7f800000)
#else
#define R_IDENTITY __longlong_as_double(0x7ff0000000000000ll)
#endif
#elif ROP == RO_MAX
#define r_combine rop_max
#define R_REDUX __reduce_max_sync
#if RTYPE == RT_INT32
#define R_IDENTITY ((int)(-0x7fffffff - 1))
#elif RTYPE == RT_UINT32
#define R_IDENTITY 0u
#elif RTYPE == RT_FLOAT32
#define R_IDENTITY __int_as_float((int)0xff800000u)
#else
#define R_IDENTITY __longlong_as_double((long long)0xfff0000000000000ull)
#endif
#elif ROP == RO_AND
#define r_combine rop_and
#define R_IDENTITY ((rT)~(rT)0)
#define R_REDUX __reduce_and_sync
#elif ROP == RO_OR
#define r_combine rop_or
#define R_IDENTITY ((rT)0)
#define R_REDUX __reduce_or_sync
#elif ROP == RO_XOR
#define r_combine rop_xor
#define R_IDENTITY ((rT)0)
#define R_REDUX __reduce_xor_sync
#else
#error "unknown ROP"
#endif

// redux.sync exists for 32-bit integers only (add/min/max signed and
// unsigned, and/or/xor unsigned), on sm_80 and newer.
#if RTYPE == RT_INT32 || RTYPE == RT_UINT32
#define R_HAS_REDUX 1
#else
#define R_HAS_REDUX 0
#endif

#define R_ENTRY(prefix) R_CAT3(prefix, _, R_SUFFIX)
#define R_FN(name) R_CAT3(name, _, R_SUFFIX)

#include REDUCE_BODY

#undef rT
#undef R_ELEM_BYTES
#undef r_combine
#undef R_IDENTITY
#undef R_REDUX
#undef R_HAS_REDUX
#undef R_ENTRY
#undef R_FN
#endif

#undef ROP
#undef RTYPE
#undef R_SUFFIX
