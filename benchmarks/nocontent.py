"""What content mode outputs on pages that have no main content.

    python benchmarks/nocontent.py [--markdown]

None of the evaluation sets has a page whose gold is empty, so the pages are made here: a
"not found" page, a login form, an index of linked headlines and a cookie wall, each on a site
of its own, each inside the same menu of eight links and a footer. Each goes through
``Deboiler(mode="content")`` (one page a site: no template to learn, the model alone judges).
"""

from __future__ import annotations

import argparse

from peers import render  # this folder's peers.py

from warcdeboil.api import Deboiler

_MENU = "".join(f"<li><a href='/{name.lower()}'>{name}</a></li>" for name in (
    "Home", "News", "Sport", "Business", "Culture", "Travel", "Weather", "Contact"))
_INDEX = "".join(f"<li><a href='/story/{n}'><h3>Council budget story number {n}</h3></a>"
                 f"<span>{n} hours ago</span></li>" for n in range(12))

PAGES = {
    "404": "<h1>Page not found</h1><p>Sorry, the page you were looking for does not exist.</p>"
           "<p><a href='/'>Back to the home page</a></p>",
    "login form": "<h1>Sign in</h1><form><label>Email <input name=email></label>"
                  "<label>Password <input type=password name=pw></label>"
                  "<button>Sign in</button></form><p><a href='/reset'>Forgot your password?"
                  "</a></p>",
    "index of linked headlines": f"<h2>Latest</h2><ul class='stories'>{_INDEX}</ul>",
    "cookie wall": "<div class='consent'><p>We use cookies to improve your experience and to "
                   "show you relevant advertising. Choose Accept to agree.</p>"
                   "<button>Accept</button> <button>Manage settings</button></div>",
}


def page_html(body: str) -> str:
    return (f"<html><head><title>Example</title></head><body><nav><ul>{_MENU}</ul></nav>"
            f"<main>{body}</main><footer><a href='/privacy'>Privacy</a> "
            "<a href='/terms'>Terms of use</a> © Example Media</footer></body></html>")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    pages = [(f"https://site{n}.example/page", page_html(body))
             for n, body in enumerate(PAGES.values())]
    deboiler = Deboiler(mode="content").fit(pages)
    rows = [[name, str(len(clean.text)), clean.text.replace("\n", " / ") or "(empty)"]
            for name, clean in zip(PAGES, deboiler.transform(pages), strict=True)]
    print(render(["page", "characters", "warcdeboil --mode content"], rows, args.markdown))


if __name__ == "__main__":
    main()
