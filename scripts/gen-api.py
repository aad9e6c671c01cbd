#!/usr/bin/env python3
"""scripts/gen-api.py -- docs/api.md from the public headers' comments.

  python3 scripts/gen-api.py                 write docs/api.md
  python3 scripts/gen-api.py --check [LIB]   exit 1 if a public function, type or macro lacks
                                             a comment, if a name has two entries or an entry
                                             another's comment or an unpaired #if/#endif (see
                                             faults), if docs/api.md is not what this script
                                             writes now, if it lost the comment of a struct,
                                             union or enum member, or (with LIB,
                                             libremotecall.a or .so)
                                             if the library exports an rc_ symbol no public
                                             header declares

The public headers are xdr/include/remotecall/*.h and runtime/include/remotecall/*.h. A
declaration is documented by the comment right above it (no blank line between), or, for a
function, type or macro declared in a group, by a comment of the same header that names it.
A struct, union or enum is shown with its members' comments (their meanings and defaults).
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER_DIRS = ["xdr/include/remotecall", "runtime/include/remotecall"]
OUT = os.path.join(ROOT, "docs", "api.md")
# the order headers appear in; others follow alphabetically
ORDER = ["remotecall.h", "status.h", "xdr.h", "proc.h", "client.h", "server.h", "trace.h"]

FUNC_RE = re.compile(r"\b(rc_[A-Za-z0-9_]+)\s*\(")
TYPEDEF_RE = re.compile(r"^typedef\b.*?\b(rc_[A-Za-z0-9_]+)\s*;\s*$|"
                        r"^typedef\b[^(]*\(\s*\*\s*(rc_[A-Za-z0-9_]+)\s*\)", re.S)
STRUCT_RE = re.compile(r"^(?:typedef\s+)?(?:struct|enum|union)\s+(rc_[A-Za-z0-9_]+)\s*\{", re.S)
MACRO_RE = re.compile(r"^#\s*define\s+(RC_[A-Za-z0-9_]+)")


def headers():
    found = {}
    for d in HEADER_DIRS:
        full = os.path.join(ROOT, d)
        for f in sorted(os.listdir(full)):
            if f.endswith(".h"):
                found[f] = os.path.join(d, f)
    names = [h for h in ORDER if h in found] + sorted(h for h in found if h not in ORDER)
    return [(h, found[h]) for h in names]


def parse(path):
    """Items of a header: (kind, names, decl text, comment or None); the file's first comment;
    the text of every comment (to find names documented in a group).

    Declarations under one comment with no blank line between (a group) make one item: its
    names in order, each once, and its declarations in one block, with the #if/#elif/#else/
    #endif lines of a conditional the group holds whole (rc_quadruple's alternatives are one
    entry, not one per branch, and rc_client_set_auth_none is shown beside
    rc_client_set_auth_sys, whose comment describes both)."""
    text = open(os.path.join(ROOT, path)).read()
    lines = text.split("\n")
    items, comments = [], []
    intro = None
    i, n = 0, len(lines)
    last_comment, last_comment_end = None, -2
    depth = 0  # inside a braced definition (struct, enum, extern "C")
    group_doc, group_end = None, -2  # a comment over a block of declarations with no blank line
    owner = None  # the group's item, which the group's later declarations join
    pending = []  # a group's conditional lines seen before its first declaration
    conds = 0  # conditionals opened inside the group and not closed yet

    def add(kind, names, decl, doc, grouped):
        nonlocal owner, pending
        if grouped and owner is not None:
            owner[1].extend(nm for nm in names if nm not in owner[1])
            owner[2] += "\n" + decl
            return
        item = [kind, list(names), "\n".join(pending + [decl]), doc]
        pending = []
        items.append(item)
        owner = item if doc is not None else None
    while i < n:
        line = lines[i]
        s = line.strip()
        if s.startswith("/*"):
            buf = [line]
            while "*/" not in lines[i] and i + 1 < n:
                i += 1
                buf.append(lines[i])
            body = clean_comment("\n".join(buf))
            comments.append(body)
            if intro is None:
                intro = body
            last_comment, last_comment_end = body, i
            i += 1
            continue
        if not s or s.startswith("//"):
            i += 1
            continue
        doc = last_comment if last_comment_end == i - 1 else None
        grouped = False
        if doc is None and group_end == i - 1:
            doc, grouped = group_doc, group_doc is not None
        if not grouped:  # a new group, or none
            owner, pending, conds = None, [], 0
        group_doc = doc  # an undocumented declaration ends the group above it
        if s.startswith("#"):
            m = MACRO_RE.match(s)
            buf = [line]
            while lines[i].rstrip().endswith("\\") and i + 1 < n:
                i += 1
                buf.append(lines[i])
            if m and not m.group(1).endswith("_H") and depth == 0:
                if doc is not None:
                    add("macro", [m.group(1)], "\n".join(buf), doc, grouped)
                else:
                    items.append(["macro", [m.group(1)], "\n".join(buf), trailing(buf[0])])
            elif doc is not None and re.match(r"#\s*(if|elif|else|endif)", s):
                # a group's conditional goes with it whole: its #if and what closes it
                if re.match(r"#\s*if", s):
                    conds += 1
                if conds > 0:
                    if owner is not None:
                        owner[2] += "\n" + "\n".join(buf)
                    else:
                        pending.extend(buf)
                if re.match(r"#\s*endif", s) and conds > 0:
                    conds -= 1
            group_end = i  # #if/#else/#endif lines keep a group together
            i += 1
            continue
        if s.startswith("extern \"C\"") or s == "}" or s.startswith("#"):
            i += 1
            continue
        # a declaration: up to the ';' that ends it at brace depth 0
        buf, d = [], 0
        while i < n:
            buf.append(lines[i])
            d += lines[i].count("{") - lines[i].count("}")
            if d <= 0 and strip_comments(lines[i]).rstrip().endswith(";"):
                break
            if d <= 0 and lines[i].strip() == "}" and len(buf) > 1:  # a static inline's body
                break
            if lines[i].strip() == "extern \"C\" {":
                break
            i += 1
        decl = "\n".join(buf)
        group_end = i
        i += 1
        flat = " ".join(decl.split())
        flat = re.sub(r"^__extension__\s+", "", flat)  # GNU's marker before a typedef
        names, kind = [], None
        m = STRUCT_RE.match(flat)
        if m:
            kind, names = "type", [m.group(1)]
            t = re.search(r"\}\s*(rc_[A-Za-z0-9_]+)\s*;$", flat)
            if t and t.group(1) not in names:
                names.append(t.group(1))
        elif flat.startswith("typedef"):
            m = TYPEDEF_RE.match(flat)
            if m:
                kind, names = "type", [m.group(1) or m.group(2)]
        else:
            m = FUNC_RE.search(flat)
            if m and flat.endswith(";") and "=" not in flat.split("(")[0]:
                kind, names = "function", [m.group(1)]
            elif m and flat.startswith("static inline") and flat.endswith("}"):
                kind, names = "function", [m.group(1)]  # shown with its body
        if kind:
            # a type with members keeps their comments: what each means, its default
            keep = kind == "macro" or (kind == "type" and "{" in decl)
            shown = strip_comments(decl.strip()) if not keep else decl.strip()
            if doc is not None:
                add(kind, names, shown, doc, grouped)
            else:
                items.append([kind, names, shown, doc])
                owner = None
        elif grouped:  # not a declaration of an rc_ name, but part of the group's text
            shown = strip_comments(decl.strip())
            if owner is not None:
                owner[2] += "\n" + shown
            else:
                pending.append(shown)
    return [tuple(it) for it in items], intro, comments


def trailing(line):
    m = re.search(r"/\*(.*?)\*/", line)
    return m.group(1).strip() if m else None


def clean_comment(c):
    c = c.strip()
    c = re.sub(r"^/\*+", "", c)
    c = re.sub(r"\*+/$", "", c)
    out = []
    for l in c.split("\n"):
        l = re.sub(r"^\s*\* ?", "", l)
        out.append(l.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


def strip_comments(decl):
    return re.sub(r"/\*.*?\*/", "", decl, flags=re.S).rstrip()


def generate():
    out = ["# API reference",
           "",
           "<!-- Generated by `python3 scripts/gen-api.py` from the comments of the public headers; "
           "do not edit by hand: edit the header and run it again (ctest `docs_api` checks). -->",
           "",
           "Every public function, type and macro of remotecall, by header, with the comment its header "
           "gives it: what it does, who owns memory on success and on failure, and the `rc_status` "
           "values it returns. `#include <remotecall/remotecall.h>` includes them all. Names starting "
           "with `rc__` are internal and not listed.",
           ""]
    undocumented = []
    for h, path in headers():
        items, intro, comments = parse(path)
        out.append(f"## `<remotecall/{h}>`")
        out.append("")
        if intro:
            out.append(intro)
            out.append("")
        for kind, names, decl, doc in items:
            if doc is None:
                named = [c for c in comments[1:] if any(re.search(r"\b" + re.escape(nm) + r"\b", c) for nm in names)]
                if not named:
                    undocumented.append(f"{path}: {kind} {', '.join(names)}")
            out.append(f"### {', '.join('`' + x + '`' for x in names)}")
            out.append("")
            out.append("```c")
            out.append(decl)
            out.append("```")
            out.append("")
            if doc:
                out.append(doc)
            else:
                out.append("(Described with the declarations around it, above.)")
            out.append("")
    text = "\n".join(out).rstrip() + "\n"
    return text, (undocumented + [f"docs/api.md: {f}" for f in faults(text)] +
                  lost_comments(text))


def faults(text):
    """What a reader would take for a fault of the reference: a name with two entries (a
    forward declaration `typedef struct rc_x rc_x;` and the definition aside), a comment that
    introduces another name than its entry's (`rc_x -- ...` under rc_y), a code block whose
    #if and #endif do not pair."""
    found, seen = [], {}
    entries = re.findall(r"^### (.*?)\n\n```c\n(.*?)\n```\n\n(.*?)(?=^### |\Z)", text, re.S | re.M)
    for head, code, doc in entries:
        names = re.findall(r"`([^`]+)`", head)
        forward = re.fullmatch(r"typedef (struct|union) (\w+) \2;", code.strip())
        for nm in names:
            if not forward:
                if nm in seen:
                    found.append(f"{nm} has two entries")
                seen[nm] = True
        m = re.match(r"\s*(rc_\w+|RC_\w+)(?:\(\))? --", doc)
        if m and m.group(1) not in names:
            found.append(f"the entry of {', '.join(names)} shows {m.group(1)}'s comment")
        depth = 0
        for line in code.split("\n"):
            if re.match(r"#\s*if", line):
                depth += 1
            elif re.match(r"#\s*(elif|else|endif)", line):
                if depth == 0:
                    found.append(f"the code of {', '.join(names)} has a stray {line.split()[0]}")
                    break
                depth -= line.lstrip("# ").startswith("endif")
        else:
            if depth:
                found.append(f"the code of {', '.join(names)} leaves an #if open")
    return found


def member_comments():
    """(header, comment) for every comment inside the braces of a struct, union or enum of the
    public headers: what api.md must show."""
    found = []
    for _, path in headers():
        text = open(os.path.join(ROOT, path)).read()
        for m in re.finditer(r"^(?:typedef\s+)?(?:struct|enum|union)\s+rc_\w+\s*\{", text, re.M):
            depth, j = 0, m.end() - 1
            while j < len(text):
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            for c in re.findall(r"/\*.*?\*/", text[m.end():j], re.S):
                found.append((path, c))
    return found


def lost_comments(text):
    """The member comments (member_comments) that text, api.md as written, does not show."""
    flat = " ".join(text.split())
    return [f"{path}: a member comment is not in docs/api.md: {' '.join(c.split())[:70]}"
            for path, c in member_comments() if " ".join(c.split()) not in flat]


def declared_names():
    names = set()
    for _, path in headers():
        text = open(os.path.join(ROOT, path)).read()
        names.update(re.findall(r"\b(rc_[A-Za-z0-9_]+)\b", text))
    return names


def main(argv):
    text, undocumented = generate()
    if len(argv) >= 2 and argv[1] == "--check":
        bad = False
        for u in undocumented:
            print(f"undocumented: {u}")
            bad = True
        cur = open(OUT).read() if os.path.exists(OUT) else ""
        if cur != text:
            print("docs/api.md is out of date: run `python3 scripts/gen-api.py`")
            bad = True
        if len(argv) >= 3:
            nm = subprocess.run(["nm", "-g", "--defined-only", argv[2]], capture_output=True, text=True)
            if nm.returncode != 0:
                print(f"nm {argv[2]} failed: {nm.stderr.strip()}")
                return 1
            known = declared_names()
            for line in nm.stdout.splitlines():
                parts = line.split()
                if len(parts) >= 3 and parts[2].startswith("rc_") and not parts[2].startswith("rc__"):
                    if parts[2] not in known:
                        print(f"exported but in no public header: {parts[2]}")
                        bad = True
        if not bad:
            print(f"docs/api.md up to date; every public declaration documented")
        return 1 if bad else 0
    with open(OUT, "w") as f:
        f.write(text)
    for u in undocumented:
        print(f"warning: undocumented: {u}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
