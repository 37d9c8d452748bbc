"""The seed's Node app of the slow-upstream experiment, taken from the article at run time.

The article (in ../shared/seeds next to the repository, not part of it) prints four TypeScript files
inline: bulkhead.ts, upstream.ts, app.ts and load.ts. Nothing of them is committed here: extract()
copies each code block out of the article into a directory under target/ when the benchmark runs,
and strips the TypeScript types so that Node 20 (which cannot run .ts files; type stripping came
with Node 22.6) runs them as plain ES modules (.mjs).

The stripping is deliberately narrow, written for the constructs the article uses, and checked:
  - `type X = { ... };` declarations are dropped;
  - `private` modifiers are dropped;
  - a return type `): T {` becomes `) {`, a type argument `f<T>(` becomes `f(`;
  - an annotation `name: T` / `name?: T` is dropped when T is a primitive, a type the file declares,
    a generic parameter, an `http.` type or a function type `() => Promise<T>`, with any `[]`.
    Object-literal keys (`limit: 50`, `status: res.status`) never match, their values are not types.
Every file is then parsed by `node --check`; anything the stripping missed fails the run there.

Two more edits, both to run side by side with the other helpers on the machine: the ports 3000 (app)
and 4001 (upstream) become the ones the benchmark chose, and the import of "./bulkhead.ts" names
"./bulkhead.mjs". Everything else is the article's text byte for byte.
"""
import glob
import os
import re
import subprocess

FILES = ["bulkhead.ts", "upstream.ts", "app.ts", "load.ts"]
CODE_START = re.compile(r"^(import|export|type|const|let|var|function|async|await|http|class|"
                        r"console|if|for|return|\}|\)|//)")


def find_article(repo_root):
    """The article's path under ../shared/seeds, or None when it is not there."""
    pattern = os.path.join(os.path.dirname(os.path.abspath(repo_root)), "shared", "seeds", "000_*.txt")
    found = sorted(glob.glob(pattern))
    if not found:
        pattern = os.path.join(os.path.abspath(repo_root), "..", "..", "shared", "seeds", "000_*.txt")
        found = sorted(glob.glob(pattern))
    return found[0] if found else None


def code_blocks(text):
    """{file name: source} for every block that opens with a `// name.ts` line."""
    lines = text.splitlines()
    blocks = {}
    i = 0
    while i < len(lines):
        m = re.match(r"^// (\w+\.ts)\s*$", lines[i])
        if not m:
            i += 1
            continue
        name = m.group(1)
        body = []
        i += 1
        # A block runs until the first line that is neither blank, indented, nor a code statement:
        # the article's prose after it.
        while i < len(lines):
            line = lines[i]
            if line.strip() == "" or line[0] in " \t" or CODE_START.match(line):
                body.append(line)
                i += 1
            else:
                break
        while body and body[-1].strip() == "":
            body.pop()
        blocks[name] = "\n".join(body) + "\n"
    return blocks


def strip_types(source):
    declared = set(re.findall(r"^type (\w+) =", source, re.M))
    generics = set(re.findall(r"\w<(\w)>\(", source))
    # Drop type declarations: `type X = {` to the matching `};` at column 0.
    source = re.sub(r"^type \w+ = \{.*?^\};\n\n?", "", source, flags=re.M | re.S)
    source = re.sub(r"\bprivate ", "", source)
    names = ["string", "number", "boolean", "void", "Promise"] + sorted(declared) + sorted(generics)
    simple = r"(?:http\.\w+|%s)(?:<\w+>)?(?:\[\])*" % "|".join(re.escape(n) for n in names)
    function_type = r"\(\)\s*=>\s*%s" % simple
    type_expr = r"(?:%s|%s)" % (function_type, simple)
    # Return types: `): Promise<T> {`, `(): void {`.
    source = re.sub(r"\)\s*:\s*%s\s*\{" % type_expr, ") {", source)
    # Type arguments on calls and declarations: `run<T>(`, `new Promise<string>(`.
    source = re.sub(r"(\w)<(?:%s)>\(" % simple, r"\1(", source)
    # Annotations on parameters, fields and variables.
    source = re.sub(r"(\w)\??:\s*%s(?=\s*[,)=;\n])" % type_expr, r"\1", source)
    return source


def extract(article_path, into, app_port, upstream_port):
    """Writes bulkhead.mjs, upstream.mjs, app.mjs and load.mjs into `into`; returns their paths."""
    with open(article_path, encoding="utf-8") as f:
        blocks = code_blocks(f.read())
    missing = [n for n in FILES if n not in blocks]
    if missing:
        raise SystemExit("headline: the article %s has no code block for %s" % (article_path, missing))
    os.makedirs(into, exist_ok=True)
    paths = {}
    for name in FILES:
        js = strip_types(blocks[name])
        js = js.replace('"./bulkhead.ts"', '"./bulkhead.mjs"')
        js = re.sub(r"\.listen\(3000\b", ".listen(%d" % app_port, js)
        js = re.sub(r"\.listen\(4001\b", ".listen(%d" % upstream_port, js)
        js = js.replace("127.0.0.1:3000", "127.0.0.1:%d" % app_port)
        js = js.replace("127.0.0.1:4001", "127.0.0.1:%d" % upstream_port)
        path = os.path.join(into, name[:-3] + ".mjs")
        with open(path, "w", encoding="utf-8") as f:
            f.write(js)
        check = subprocess.run(["node", "--check", path], capture_output=True, text=True)
        if check.returncode != 0:
            raise SystemExit("headline: %s does not parse as JavaScript after stripping its types:\n%s"
                             % (path, check.stderr))
        paths[name[:-3]] = path
    return paths
