#!/usr/bin/env python3
"""To and Cc of each mail of a series, from the files that mail touches.

Usage: mail_recipients.py [--cc LIST] [--lists LIST] REPO SENDER MAIL...
       mail_recipients.py [--cc LIST] [--lists LIST] --check

REPO is the git tree the series was formatted from (build/series-git, the
series checked out), whose scripts/get_maintainer.pl and MAINTAINERS say
who looks after which file; SENDER is "Name <email>" of whoever sends it.
Each MAIL (git format-patch output) gets, in its headers:

  To: the maintainers of the files it touches
      (get_maintainer.pl --nogit --nogit-fallback --norolestats --nor --nol
      --nokeywords)
  Cc: its author when that is not the sender (a patch carried for someone
      else), the people of its own tags ("Cc:" and every "...-by:", as
      git send-email adds them: a co-developer, whoever suggested or
      reviewed it), the reviewers and lists of those files
      (get_maintainer.pl ... --nom), the maintainers whose MAINTAINERS
      keywords (K:) the mail's text matches, not its files (a comment
      that names PREEMPT_RT, a changelog that names clang: they may want
      to see it, but the mail is not theirs to take), the lists of
      --lists (those every mail of the series goes to: linux-mm for an
      mm series, whatever file a mail touches), and the people of --cc
      ("Name <email>, other@example.org": make series MAIL_CC=)

The cover letter (the MAIL named *0000-cover-letter.patch) gets the union:
To every maintainer of the series, Cc everyone else. Nobody is named twice
in one mail (by address: one name can be two people, as MAINTAINERS
has two Wei Xus), nor the sender. Prints "N To, N Cc  FILE" per mail.
--check only checks the LISTs.
"""

import concurrent.futures
import re
import subprocess
import sys
from pathlib import Path

GET_MAINTAINER = ["perl", "scripts/get_maintainer.pl", "--nogit", "--nogit-fallback",
                  "--norolestats"]
ADDRESS = re.compile(r"<([^<>\s]+@[^<>\s]+)>|([^<>\s,\"]+@[^<>\s,\"]+)")


def address(who):
    """The e-mail address of "Name <email>" or "email", lower case."""
    m = ADDRESS.search(who)
    if not m:
        sys.exit(f"mail_recipients.py: not an address: {who!r}")
    return (m.group(1) or m.group(2)).lower()


def get_maintainer(repo, mail, *which):
    p = subprocess.run([*GET_MAINTAINER, *which, str(mail.resolve())], cwd=repo,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"mail_recipients.py: get_maintainer.pl failed on {mail.name}: "
                 f"{p.stderr.strip().splitlines()[-1:]}")
    return [l.strip() for l in p.stdout.splitlines() if "@" in l]


def headers_and_body(text):
    head, sep, body = text.partition("\n\n")
    if not sep:
        sys.exit("mail_recipients.py: a mail without a body")
    return head, body


def header(head, name):
    """A header's value, continuation lines joined."""
    m = re.search(rf"^{name}: (.*(?:\n[ \t].*)*)", head, re.M)
    return re.sub(r"\n[ \t]+", " ", m.group(1)) if m else ""


# The tags git send-email copies by default (its "cc", "sob" and
# "misc-by"), matched as it matches them: case-insensitively.
TAG = re.compile(r"^(?:cc|[a-z][a-z-]*-by):\s*(.*@.*)$", re.I)


def trailers_cc(body):
    """The people of a commit message's tags (the body above its "---"):
    Cc: and every ...-by: (Signed-off-by, Co-developed-by, Suggested-by,
    Reviewed-by, ...), without a trailing comment ("Cc: stable@... # 7.3+")."""
    message = body.split("\n---\n", 1)[0]
    return [m.group(1).split(" #", 1)[0].strip()
            for m in map(TAG.match, message.splitlines()) if m]


def unique(people, drop=()):
    """People in order, once each by address, none of `drop` (addresses)."""
    seen, out = set(drop), []
    for p in people:
        a = address(p)
        if a not in seen:
            seen.add(a)
            out.append(p)
    return out


def fold(name, people):
    return f"{name}: " + ",\n    ".join(people) + "\n" if people else ""


def write(mail, to, cc):
    head, body = headers_and_body(mail.read_text())
    if re.search(r"^(To|Cc): ", head, re.M):
        sys.exit(f"mail_recipients.py: {mail.name} has To/Cc headers already")
    mail.write_text(head + "\n" + fold("To", to) + fold("Cc", cc) + "\n" + body)


def people(text):
    """The people of a comma-separated list, each "Name <email>" or "email"."""
    out = []
    for item in re.findall(r'(?:"[^"]*"|[^,"])+', text):
        item = item.strip()
        if item:
            address(item)
            out.append(item)
    return out


def main():
    args = sys.argv[1:]
    extra, lists = [], []
    while args[:1] in (["--cc"], ["--lists"]) and len(args) > 1:
        (extra if args[0] == "--cc" else lists).extend(people(args[1]))
        args = args[2:]
    if args == ["--check"]:
        return
    if len(args) < 3:
        sys.exit("usage: " + __doc__.split("Usage: ")[1].split("\n\n")[0])
    repo, sender, mails = args[0], args[1], [Path(a) for a in args[2:]]
    me = address(sender)
    covers = [m for m in mails if m.name.endswith("0000-cover-letter.patch")]
    patches = [m for m in mails if m not in covers]
    if len(covers) > 1 or not patches:
        sys.exit("mail_recipients.py: give the patches of one series and at most one cover letter")

    def lookup(mail):
        return (get_maintainer(repo, mail, "--nor", "--nol", "--nokeywords"),
                get_maintainer(repo, mail, "--nom"),
                get_maintainer(repo, mail, "--nor", "--nol"))

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        found = list(pool.map(lookup, patches))
    all_to, all_cc = [], []
    for mail, (maintainers, others, by_keyword) in zip(patches, found):
        head, body = headers_and_body(mail.read_text())
        author = header(head, "From")
        cc = ([author] if author and address(author) != me else []) + trailers_cc(body)
        cc += others + by_keyword + lists + extra
        # No maintainer at all: the lists take the mail.
        to = unique(maintainers or others, {me})
        cc = unique(cc, {me} | {address(p) for p in to})
        write(mail, to, cc)
        all_to += to
        all_cc += cc
        print(f"{len(to)} To, {len(cc)} Cc  {mail.name}")
    if covers:
        to = unique(all_to, {me})
        cc = unique(all_cc, {me} | {address(p) for p in to})
        write(covers[0], to, cc)
        print(f"{len(to)} To, {len(cc)} Cc  {covers[0].name}")


if __name__ == "__main__":
    main()
