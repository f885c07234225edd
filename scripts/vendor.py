"""Copy the front-end files Flowdesk serves from node_modules/ into static/vendor/.

Run after `npm ci`. Only this explicit list is served; static/vendor/ is never committed.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from webapp.web.assets import TEST_VENDOR_FILES, VENDOR_FILES, served_path  # noqa: E402


def main() -> int:
    source_root = ROOT / "node_modules"
    target_root = ROOT / "static" / "vendor"
    missing = []
    for package, files in [*VENDOR_FILES.items(), *TEST_VENDOR_FILES.items()]:
        for name in files:
            source = source_root / package / name
            if not source.exists():
                if package not in TEST_VENDOR_FILES:
                    missing.append(str(source))
                continue
            target = ROOT / "static" / served_path(package, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    if missing:
        print("missing (run `npm ci` first):\n  " + "\n  ".join(missing), file=sys.stderr)
        return 1
    print(f"copied front-end assets into {target_root.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
