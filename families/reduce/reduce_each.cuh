// Includes the family's REDUCE_BODY once per supported (operator, type):
// sum, min and max of int32, uint32, float32 and float64; sum of int64; and,
// or and xor of uint32 and uint64. (uint64 sum and the signed bitwise
// operators are the same bits: the host maps them onto these entries.)
#define ROP RO_SUM
#define RTYPE RT_INT32
#define R_SUFFIX sum_int32
#include "reduce_combo.cuh"
#define ROP RO_SUM
#define RTYPE RT_UINT32
#define R_SUFFIX sum_uint32
#include "reduce_combo.cuh"
#define ROP RO_SUM
#define RTYPE RT_INT64
#define R_SUFFIX sum_int64
#include "reduce_combo.cuh"
#define ROP RO_SUM
#define RTYPE RT_FLOAT32
#define R_SUFFIX sum_float32
#include "reduce_combo.cuh"
#define ROP RO_SUM
#define RTYPE RT_FLOAT64
#define R_SUFFIX sum_float64
#include "reduce_combo.cuh"
#define ROP RO_MIN
#define RTYPE RT_INT32
#define R_SUFFIX min_int32
#include "reduce_combo.cuh"
#define ROP RO_MIN
#define RTYPE RT_UINT32
#define R_SUFFIX min_uint32
#include "reduce_combo.cuh"
#define ROP RO_MIN
#define RTYPE RT_FLOAT32
#define R_SUFFIX min_float32
#include "reduce_combo.cuh"
#define ROP RO_MIN
#define RTYPE RT_FLOAT64
#define R_SUFFIX min_float64
#include "reduce_combo.cuh"
#define ROP RO_MAX
#define RTYPE RT_INT32
#define R_SUFFIX max_int32
#include "reduce_combo.cuh"
#define ROP RO_MAX
#define RTYPE RT_UINT32
#define R_SUFFIX max_uint32
#include "reduce_combo.cuh"
#define ROP RO_MAX
#define RTYPE RT_FLOAT32
#define R_SUFFIX max_float32
#include "reduce_combo.cuh"
#define ROP RO_MAX
#define RTYPE RT_FLOAT64
#define R_SUFFIX max_float64
#include "reduce_combo.cuh"
#define ROP RO_AND
#define RTYPE RT_UINT32
#define R_SUFFIX and_uint32
#include "reduce_combo.cuh"
#define ROP RO_AND
#define RTYPE RT_UINT64
#define R_SUFFIX and_uint64
#include "reduce_combo.cuh"
#define ROP RO_OR
#define RTYPE RT_UINT32
#define R_SUFFIX or_uint32
#include "reduce_combo.cuh"
#define ROP RO_OR
#define RTYPE RT_UINT64
#define R_SUFFIX or_uint64
#include "reduce_combo.cuh"
#define ROP RO_XOR
#define RTYPE RT_UINT32
#define R_SUFFIX xor_uint32
#include "reduce_combo.cuh"
#define ROP RO_XOR
#define RTYPE RT_UINT64
#define R_SUFFIX xor_uint64
#include "reduce_combo.cuh"
