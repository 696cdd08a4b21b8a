"""rr's test programs, built as rr's CMakeLists.txt builds them: its
BASIC_TESTS list (with the tests it adds when a header or symbol is found) and
BASIC_CPP_TESTS, with rr's flags, definitions and include directories, for
x86-64. Built into CACHE/rr-tests-VERSION/; only what is missing or whose
compile command changed is compiled again."""
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import sys
import tempfile
import threading

from bounded_command import run_quiet


def cmake_list(text, var):
    """The names of a `set(VAR ...)` list in a CMakeLists.txt, comments dropped."""
    m = re.search(r"^set\(" + var + r"\s*\n(.*?)^\)", text, re.M | re.S)
    if not m:
        return []
    names = []
    for line in m.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        names += line.split()
    return names


def compiles(cc, code, args=()):
    """Whether a probe program compiles here: how CMake's find_path and
    check_symbol_exists decide what rr's CMakeLists.txt adds."""
    with tempfile.TemporaryDirectory(prefix="conf-probe-") as d:
        src = os.path.join(d, "probe.c")
        with open(src, "w") as f:
            f.write(code)
        rc, _ = run_quiet([cc, "-D_GNU_SOURCE", *args, src, "-o", os.path.join(d, "probe")], timeout=60)
        return rc == 0


class Corpus:
    """rr's BASIC_TESTS (and its C++ basic tests), built as rr's CMakeLists.txt does."""

    def __init__(self, source, cache, jobs):
        self.src = source["tree"]
        self.version = source["upstream_version"]
        self.out = os.path.join(cache, f"rr-tests-{self.version}")
        self.jobs = jobs
        with open(os.path.join(self.src, "CMakeLists.txt")) as f:
            self.cmake = f.read()
        self.notes = []
        self.newly_built = 0
        self._configure()

    def _configure(self):
        text = self.cmake
        # What CMake's find_path / check_symbol_exists would find on this machine,
        # and the definitions rr adds for those found.
        found = {}
        for var, header in re.findall(r'find_path\((\w+) NAMES "([^"]+)"\)', text):
            found[var] = compiles("cc", f"#include <{header}>\nint main(void) {{ return 0; }}\n", ["-c"])
        for sym, header, var in re.findall(r'check_symbol_exists\((\w+) "([^"]+)" (\w+)\)', text):
            found[var] = compiles("cc", f"#include <{header}>\nint main(void) {{ (void)&{sym}; return 0; }}\n",
                                  ["-pthread"])
        self.found = found
        defines = [f'-DRR_VERSION="{self.version}"']
        if re.search(r"add_definitions\(-DZSTD=1\)", text):
            defines.append("-DZSTD=1")  # rr adds it whenever not building for Android
        for var, ok in found.items():
            if ok and re.search(r"add_definitions\(-D" + var + r"(=1)?\)", text):
                defines.append(f"-D{var}=1" if f"-D{var}=1" in text else f"-D{var}")
        self.gen = os.path.join(self.out, "gen")
        includes = ["-I" + os.path.join(self.src, d) for d in
                    ("include", "third-party/proc-service", "third-party/brotli/include")]
        includes += ["-I" + self.gen, "-I" + os.path.join(self.src, "src", "preload")]
        # FLAGS_COMMON for x86-64, then the C (CMAKE_C_FLAGS) or C++ additions, then
        # RR_TEST_FLAGS. rr's default build type (Debug) adds -Werror to the
        # tests; Debian builds with CMAKE_BUILD_TYPE=None, which does not: we
        # follow Debian so that warnings of this compiler do not fail a test.
        common = ["-D__USE_LARGEFILE64", "-pthread", "-msse2", "-D__MMX__", "-D__SSE__", "-D__SSE2__",
                  f"-fmacro-prefix-map={self.src}/="]
        test_flags = ["-Wall", "-Wextra", "-DDEBUG", "-UNDEBUG", "-g3", "-O0"]
        for frag in ["-D__USE_LARGEFILE64 -pthread", "-msse2 -D__MMX__ -D__SSE__ -D__SSE2__",
                     "-Wstrict-prototypes -std=gnu11", "-std=c++17", "-Wall -Wextra -DDEBUG -UNDEBUG",
                     '"${RR_FLAGS_DEBUG} -g3 -O0"']:
            if frag not in text:
                self.notes.append(f"rr's CMakeLists.txt no longer has '{frag}': the test flags may be out of date")
        self.cflags = common + ["-Wstrict-prototypes", "-std=gnu11"] + defines + includes + test_flags
        self.cxxflags = common + ["-D__STDC_LIMIT_MACROS", "-D__STDC_FORMAT_MACROS", "-std=c++17"] + \
            defines + includes + test_flags

        basic = cmake_list(text, "BASIC_TESTS")
        self.basic_count = len(basic)
        conditional = re.findall(r"if\((\w+)\)\s*\n\s*set\(BASIC_TESTS \$\{BASIC_TESTS\}\s+([\w/]+)\s*\)", text)
        self.conditional = []
        for var, test in conditional:
            if found.get(var):
                basic.append(test)
                self.conditional.append(test)
            else:
                self.notes.append(f"{test}: not in BASIC_TESTS here ({var} not found)")
        cpp = cmake_list(text, "BASIC_CPP_TESTS")
        # Static libraries of the test directory and the tests linked with them.
        libs = {}
        for name, body in re.findall(r"add_library\((\w+)\s+([^)]*)\)", text):
            srcs = [s for s in body.split() if s.startswith("src/test/")]
            if srcs:
                libs[name] = srcs
        self.extra_libs = {}
        for target, lib in re.findall(r"target_link_libraries\((\w+) (\w+)\)", text):
            if lib in libs:
                self.extra_libs.setdefault(target, []).append(lib)
        self.libs = libs
        self.tests = {}
        for t in basic:
            if t.startswith("arm/"):
                continue  # rr builds these on aarch64 only
            self.tests[os.path.basename(t)] = {"path": t, "lang": "c",
                                               "source": os.path.join(self.src, "src", "test", t + ".c")}
        for t in cpp:
            self.tests[os.path.basename(t)] = {"path": t, "lang": "c++",
                                               "source": os.path.join(self.src, "src", "test", t + ".cc")}
        self.cpp_count = len(cpp)

    def _generate(self):
        os.makedirs(self.gen, exist_ok=True)
        target = os.path.join(self.gen, "SyscallEnumsForTestsX64.generated")
        if os.path.exists(target):
            return None
        script = os.path.join(self.src, "src", "generate_syscalls.py")
        rc, out = run_quiet([sys.executable, script, target], timeout=120)
        if rc != 0 or not os.path.exists(target):
            return f"generating {os.path.basename(target)} failed: {out.strip()[-300:]}"
        return None

    def _build_lib(self, name):
        out = os.path.join(self.out, "lib", f"lib{name}.a")
        if os.path.exists(out):
            return out, None
        objdir = os.path.join(self.out, "lib", name + ".o.d")
        os.makedirs(objdir, exist_ok=True)
        objs = []
        for s in self.libs[name]:
            obj = os.path.join(objdir, os.path.basename(s) + ".o")
            rc, text = run_quiet(["cc"] + self.cflags + ["-c", os.path.join(self.src, s), "-o", obj], timeout=300)
            if rc != 0:
                return None, first_error(text)
            objs.append(obj)
        rc, text = run_quiet(["ar", "rcs", out + ".tmp"] + objs, timeout=60)
        if rc != 0:
            return None, first_error(text)
        os.rename(out + ".tmp", out)
        return out, None

    def command(self, name):
        t = self.tests[name]
        binary = os.path.join(self.out, "bin", name)
        if t["lang"] == "c++":
            argv = ["g++"] + self.cxxflags + [t["source"], "-o", binary + ".tmp", "-lrt"]
        else:
            argv = ["cc"] + self.cflags + [t["source"], "-o", binary + ".tmp"]
            for lib in self.extra_libs.get(name, []):
                argv.append(os.path.join(self.out, "lib", f"lib{lib}.a"))
            argv += ["-lrt", "-ldl"]
        return argv, binary

    def build(self, names, rebuild=False):
        """Builds what is missing; returns {name: (binary or None, reason)}."""
        os.makedirs(os.path.join(self.out, "bin"), exist_ok=True)
        os.makedirs(os.path.join(self.out, "logs"), exist_ok=True)
        err = self._generate()
        if err:
            return {n: (None, err) for n in names}
        stamp_path = os.path.join(self.out, "build.json")
        try:
            with open(stamp_path) as f:
                stamps = json.load(f)
        except (OSError, ValueError):
            stamps = {}
        lib_errors = {}
        for name in names:
            for lib in self.extra_libs.get(name, []):
                if lib not in lib_errors:
                    lib_errors[lib] = self._build_lib(lib)[1]
        results = {}
        lock = threading.Lock()

        def one(name):
            argv, binary = self.command(name)
            key = hashlib.sha256(" ".join(argv).encode()).hexdigest()[:16]
            if not rebuild and os.path.exists(binary) and stamps.get(name) == key:
                return name, binary, "cached"
            for lib in self.extra_libs.get(name, []):
                if lib_errors.get(lib):
                    return name, None, f"library {lib}: {lib_errors[lib]}"
            if not os.path.exists(self.tests[name]["source"]):
                return name, None, "source file missing"
            rc, text = run_quiet(argv, timeout=300)
            logpath = os.path.join(self.out, "logs", name + ".log")
            with open(logpath, "w") as f:
                f.write(shlex.join(argv) + "\n" + text)
            if rc != 0:
                if os.path.exists(binary):
                    os.unlink(binary)
                return name, None, first_error(text)
            os.replace(binary + ".tmp", binary)
            with lock:
                stamps[name] = key
            return name, binary, "built"

        built = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, self.jobs)) as pool:
            for name, binary, why in pool.map(one, names):
                results[name] = (binary, why)
                built += why == "built"
        with open(stamp_path + ".tmp", "w") as f:
            json.dump(stamps, f, indent=1, sort_keys=True)
        os.replace(stamp_path + ".tmp", stamp_path)
        self.newly_built = built
        return results


def first_error(text):
    """The compiler's first error line, the reason a test is build-failed."""
    for line in text.splitlines():
        if "error:" in line or "undefined reference" in line:
            return line.strip()[:300]
    lines = [l for l in text.splitlines() if l.strip()]
    return (lines[-1].strip() if lines else "failed")[:300]
