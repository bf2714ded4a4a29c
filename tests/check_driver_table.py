"""driver.h's entry points carry, each, the newest signature version of
cudaTypedefs.h not above DRIVER_API_VERSION (the one cuGetProcAddress returns
at that version), so a pointer's type matches the function it receives. An
entry newer than DRIVER_API_VERSION is asked for at its own version, so it
must name the newest signature not above that version.
usage: check_driver_table.py driver.h driver.c cudaTypedefs.h"""
import re
import sys

header, source, typedefs = (open(p).read() for p in sys.argv[1:4])
api = int(re.search(r"#define DRIVER_API_VERSION (\d+)", source).group(1))
listed = re.findall(r"X\((cu\w+), (\d+)\)", header)
available = {}
for name, version in re.findall(r"\bPFN_(cu\w+?)_v(\d+)\)", typedefs):
    available.setdefault(name, set()).add(int(version))
bad = 0
for name, version in listed:
    bound = max(api, int(version))
    versions = [v for v in available.get(name, ()) if v <= bound]
    want = max(versions) if versions else None
    if want != int(version):
        print(f"{name}: driver.h names v{version}, cudaTypedefs.h's newest at or below {api} is v{want}")
        bad += 1
print(f"{len(listed)} entry points checked against cudaTypedefs.h at {api}")
sys.exit(1 if bad or len(listed) < 40 else 0)
