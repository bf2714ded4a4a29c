"""src/driver/nccl.h declares the part of NCCL's C ABI that ptxkit uses
(so that the build needs no nccl.h): its constants and its entry points'
parameter counts and return kinds must be those of nccl.h.
usage: check_nccl_abi.py nccl.h(ptxkit's) NCCL_H; exit 77 when NCCL_H is absent."""
import os
import re
import sys

ours_path, theirs_path = sys.argv[1:3]
if not os.path.exists(theirs_path):
    print(f"{theirs_path} not found: nothing to compare against")
    sys.exit(77)
ours = re.sub(r"\\\n\s*", " ", open(ours_path).read())  # macro lines joined
theirs = open(theirs_path).read()
bad = []

# ptxkit's constant -> nccl.h's name
names = {
    "NCCL_SUCCESS": "ncclSuccess", "NCCL_UNHANDLED_CUDA_ERROR": "ncclUnhandledCudaError",
    "NCCL_SYSTEM_ERROR": "ncclSystemError", "NCCL_INTERNAL_ERROR": "ncclInternalError",
    "NCCL_INVALID_ARGUMENT": "ncclInvalidArgument", "NCCL_INVALID_USAGE": "ncclInvalidUsage",
    "NCCL_REMOTE_ERROR": "ncclRemoteError", "NCCL_IN_PROGRESS": "ncclInProgress",
    "NCCL_INT8": "ncclInt8", "NCCL_UINT8": "ncclUint8", "NCCL_INT32": "ncclInt32", "NCCL_UINT32": "ncclUint32",
    "NCCL_INT64": "ncclInt64", "NCCL_UINT64": "ncclUint64", "NCCL_FLOAT32": "ncclFloat32",
    "NCCL_FLOAT64": "ncclFloat64", "NCCL_SUM": "ncclSum", "NCCL_PROD": "ncclProd", "NCCL_MAX": "ncclMax",
    "NCCL_MIN": "ncclMin", "NCCL_ID_BYTES": "NCCL_UNIQUE_ID_BYTES",
}
our_values = {k: int(v) for k, v in re.findall(r"\b(NCCL_[A-Z0-9_]+)\s*=\s*(\d+)", ours)}
their_values = {k: int(v) for k, v in re.findall(r"\b(nccl[A-Za-z0-9]+)\s*=\s*(\d+)", theirs)}
their_values.update({k: int(v) for k, v in re.findall(r"#define\s+(NCCL_UNIQUE_ID_BYTES)\s+(\d+)", theirs)})
for ours_name, their_name in names.items():
    if our_values.get(ours_name) is None:
        bad.append(f"src/driver/nccl.h lacks {ours_name}")
    elif their_values.get(their_name) != our_values[ours_name]:
        bad.append(f"{ours_name} = {our_values[ours_name]}, nccl.h's {their_name} = {their_values.get(their_name)}")

# the version macro: the same encoding
if not re.search(r"#define NCCL_VERSION\(X,Y,Z\) \(\(\(X\) <= 2 && \(Y\) <= 8\) \? \(X\) \* 1000", theirs):
    bad.append("nccl.h's NCCL_VERSION has another encoding than NCCL_VERSION_CODE_OF")

def param_count(params):
    params = params.strip()
    return 0 if params in ("", "void") else params.count(",") + 1

entries = re.findall(r"X\((nccl\w+),\s*(\d+),\s*([^,]+),\s*\(([^)]*)\)\)", ours)
for name, since, ret, params in entries:
    m = re.search(r"^\s*(ncclResult_t|const char\s*\*)\s*%s\s*\(([^)]*)\)\s*;" % name, theirs, re.M)
    if not m:
        bad.append(f"{name}: not declared in nccl.h")
        continue
    their_ret = "const char *" if m.group(1).startswith("const") else "nccl_result"
    if their_ret != ret.strip():
        bad.append(f"{name}: returns {ret.strip()} here, {m.group(1)} in nccl.h")
    if param_count(m.group(2)) != param_count(params):
        bad.append(f"{name}: {param_count(params)} parameters here, {param_count(m.group(2))} in nccl.h")
for b in bad:
    print("FAIL", b)
print(f"{len(names)} constants and {len(entries)} entry points checked against {theirs_path}")
sys.exit(1 if bad or len(entries) < 15 else 0)
