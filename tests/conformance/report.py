"""What a run tells: the table by class (counts, the tests of each class,
each failing test's first message, passed / passing natively), and the JSON
of every test's phases for a closer look."""
import json

from outcome_classes import CLASS_ORDER, NOT_SCORED, PASSED


def format_table(results, meta):
    by_class = {}
    for r in results:
        by_class.setdefault(r["class"], []).append(r)
    lines = []
    lines.append(f"rr {meta['rr_version']} ({meta['source']}); rewind {meta['rewind']}")
    lines.append(f"BASIC_TESTS: {meta['basic_tests']} (+{len(meta['conditional_tests'])} conditional: "
                 f"{' '.join(meta['conditional_tests']) or '-'}; +{meta['cpp_tests']} BASIC_CPP_TESTS); "
                 f"selected {meta['selected']}, built {meta['built']}, build-failed {meta['build_failed']}")
    lines.append("")
    lines.append(f"{'class':26s} {'count':>5s}")
    for cls in CLASS_ORDER + sorted(set(by_class) - set(CLASS_ORDER)):
        if cls in by_class:
            lines.append(f"{cls:26s} {len(by_class[cls]):5d}")
    for cls in CLASS_ORDER + sorted(set(by_class) - set(CLASS_ORDER)):
        rs = sorted(by_class.get(cls, []), key=lambda r: r["name"])
        if not rs:
            continue
        lines.append("")
        lines.append(f"== {cls} ({len(rs)})")
        if cls in ("pass",):
            names = [r["name"] for r in rs]
            for i in range(0, len(names), 6):
                lines.append("   " + " ".join(names[i:i + 6]))
        else:
            for r in rs:
                lines.append(f"   {r['name']:30s} {r.get('message', '')}")
    native_ok = [r for r in results if r["class"] not in NOT_SCORED]
    good = [r for r in native_ok if r["class"] in PASSED]
    lines.append("")
    lines.append(f"passed {len(good)} / {len(native_ok)} passing natively "
                 f"({sum(r['class'] == 'pass' for r in results)} pass, "
                 f"{sum(r['class'] == 'expected-refusal' for r in results)} expected refusals); "
                 f"{len(results)} tests run, wall time {meta['wall_time']:.0f} s")
    if meta.get("gdb_sample"):
        g = meta["gdb_sample"]
        lines.append(f"gdb sample: {g['ok']} / {g['checked']} ok")
    if meta.get("interrupted"):
        lines.append("interrupted: the tests still running were killed, the others not run")
    if meta.get("stale_expected"):
        lines.append("expected refusals that were not refused: " + " ".join(meta["stale_expected"]))
    return "\n".join(lines) + "\n"


def write_json(path, results, meta):
    counts = {}
    for r in results:
        counts[r["class"]] = counts.get(r["class"], 0) + 1
    meta = dict(meta, counts=counts,
                passing_natively=sum(r["class"] not in NOT_SCORED for r in results),
                passed=sum(r["class"] in PASSED for r in results))
    with open(path, "w") as f:
        json.dump({"meta": meta, "tests": sorted(results, key=lambda r: r["name"])}, f, indent=1)
