#!/usr/bin/env python3
"""Internal link check of the built site (make docs-build): every relative href and src in docs/_build/html points
to a file that exists, and every #fragment to an element id in that file. External links are counted, never fetched
(this machine and CI reach no web site). Exits 1 listing each broken link."""
import html.parser
import pathlib
import re
import sys
import urllib.parse

SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//")


class Page(html.parser.HTMLParser):
    """Collects the links and the element ids of one HTML file."""

    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value:
                self.links.append(value)


def parse(path, cache={}):
    if path not in cache:
        page = Page()
        page.feed(path.read_text(encoding="utf-8"))
        cache[path] = page
    return cache[path]


def main(root):
    root = pathlib.Path(root).resolve()
    broken, checked, external = [], 0, 0
    for path in sorted(root.rglob("*.html")):
        for link in parse(path).links:
            if SCHEME.match(link):
                external += 1
                continue
            target, _, fragment = link.partition("#")
            target = urllib.parse.unquote(target.split("?")[0])
            file = (path.parent / target).resolve() if target else path
            checked += 1
            if file.is_dir():
                file = file / "index.html"
            if not file.is_file():
                broken.append(f"{path.relative_to(root)}: {link}: no file {target}")
            elif fragment and file.suffix == ".html" and urllib.parse.unquote(fragment) not in parse(file).ids:
                broken.append(f"{path.relative_to(root)}: {link}: no id {fragment!r} in {file.relative_to(root)}")
    for b in broken:
        print(f"broken link: {b}", file=sys.stderr)
    print(f"internal links: {checked} checked, {len(broken)} broken; external links: {external} (not fetched)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/_build/html"))
