#!/usr/bin/env bash
# Renders this repository's pages as a person sees them: the suite's
# report.html (tests/rag_cases, replayed), a suite of conversations'
# (tests/conversation_cases, replayed) and the calibration page of the
# labelled claims (replayed), screenshotted by headless Chromium into
# docs/screenshots/. Checks each page rendered something (not a blank
# image). Skips, successfully, when Chromium is not installed (CI machines
# without it): `apt-get install chromium` on Debian.
#
#   scripts/screenshots.sh            # render, screenshot, check
#   scripts/screenshots.sh --update   # also rewrite the committed PNGs
#
# Cropping and shrinking the PNGs needs Python with Pillow
# (`python3 -m pip install pillow`); without it the full-size images are
# checked but not written to docs/.
set -euo pipefail
cd "$(dirname "$0")/.."

update=false
[[ "${1:-}" == "--update" ]] && update=true

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "screenshots: Chromium is not installed: skipped (apt-get install chromium)"
  exit 0
fi

out=target/ragaliq/pages
mkdir -p "$out"
export CARGO_TERM_COLOR=never
unset RAGALIQ_MODE
# The suite, replayed: report.html beside report.json.
CI=true RAGALIQ_REPORT_DIR="$out/suite" cargo test -q -p ragaliq-tests --test rag_suite >/dev/null
# A suite of conversations, replayed (its test writes target/ragaliq/conversations/).
CI=true cargo test -q -p ragaliq-tests --test conversation -- a_suite_of_conversations >/dev/null
mkdir -p "$out/conversations"
cp target/ragaliq/conversations/report.html "$out/conversations/report.html"
# The calibration page of the scripted judges, replayed.
# The binaries as `cargo test --workspace` builds them, never `-p` (why: .ci/run).
cargo build -q --workspace --bins --examples
CI=true "${CARGO_TARGET_DIR:-target}/debug/cargo-ragaliq" ragaliq calibrate tests/labelled_claims \
  --judge scripted=tests/labelled_claims/judges/scripted.toml \
  --judge flipping-x5=tests/labelled_claims/judges/flipping-x5.toml \
  --html "$out/calibration.html" >/dev/null || true
[[ -s "$out/calibration.html" ]] || { echo "screenshots: no calibration page"; exit 1; }

shot() { # page, png, height
  "$browser" --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1280,"$3" --screenshot="$2" "file://$PWD/$1" >/dev/null 2>&1
}
shot "$out/suite/report.html" "$out/report.png" 5200
shot "$out/calibration.html" "$out/calibration.png" 5200
shot "$out/conversations/report.html" "$out/conversations.png" 5200

python=$(command -v python3 || true)
if [[ -n "$python" ]] && "$python" -c 'import PIL' 2>/dev/null; then
  "$python" - "$out" "$update" <<'EOF'
import sys
from PIL import Image, ImageChops
out, update = sys.argv[1], sys.argv[2] == "true"
for name, keep in (("report", 2600), ("calibration", 2600), ("conversations", 2600)):
    img = Image.open(f"{out}/{name}.png").convert("RGB")
    # The page's own extent: crop the white below and to the right of it.
    box = ImageChops.difference(img, Image.new("RGB", img.size, "white")).getbbox()
    if box is None:
        sys.exit(f"screenshots: {name}.png is blank")
    colours = len(img.crop(box).getcolors(1 << 20) or [])
    if colours < 8:
        sys.exit(f"screenshots: {name}.png shows almost nothing ({colours} colours)")
    img = img.crop((0, 0, min(img.width, box[2] + 16), min(box[3] + 16, keep)))
    print(f"screenshots: {name}: {img.width}x{img.height}, {colours} colours")
    if update:
        small = img.resize((img.width * 3 // 4, img.height * 3 // 4), Image.LANCZOS)
        small.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(f"docs/screenshots/{name}.png", optimize=True)
EOF
else
  for f in report calibration conversations; do
    [[ $(stat -c %s "$out/$f.png") -gt 20000 ]] || { echo "screenshots: $f.png looks blank"; exit 1; }
  done
  echo "screenshots: rendered (install Pillow to check and crop them)"
fi
echo "screenshots: pages in $out/ (report: suite/report.html, conversations/report.html, calibration.html)"
