"""The command line's `--oauth` against the conformance suite's authorization server, run by
the suite as its client (`client --command "python3 tests/mcp/cli_oauth.py AI_TOOL" --scenario
auth/metadata-default`, from scripts/conformance.sh); the server's URL comes last.

A person is played here: the first `ai-tool tools --mcp-http URL --oauth` prints the
authorization URL, which is opened as a browser would (its redirect followed to the command's
listener on 127.0.0.1); the tools are then listed. The token file must be the user's alone
(0600, in a 0700 directory). A second run must list the tools without asking again (the kept
token), and a token file that others may read must be refused, naming its mode.
"""

import os
import stat
import subprocess
import sys
import tempfile
import threading
import urllib.request

ai_tool, url = sys.argv[1], sys.argv[-1]
config = tempfile.mkdtemp(prefix="ai-tool-oauth-")
env = dict(os.environ, XDG_CONFIG_HOME=config, RUST_LOG="warn")
command = [ai_tool, "tools", "--mcp-http", url, "--oauth"]


def fail(why):
    print(f"cli_oauth: {why}", file=sys.stderr)
    sys.exit(1)


def run(expect_authorization):
    """Runs the command, opening the authorization URL it prints; returns its output."""
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    opened = []
    err_lines = []

    def read_err():
        for line in process.stderr:
            err_lines.append(line)
            if line.startswith("http://") or line.startswith("https://"):
                opened.append(line.strip())
                # The browser: the redirect lands on the command's listener.
                with urllib.request.urlopen(line.strip(), timeout=30) as page:
                    body = page.read().decode()
                if "Authorized" not in body:
                    fail(f"the redirect page says: {body}")

    reader = threading.Thread(target=read_err)
    reader.start()
    try:
        out = process.stdout.read()
        code = process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        fail("the command did not end within 60 s")
    reader.join()
    if code != 0:
        fail(f"exit {code}: {''.join(err_lines)}")
    if bool(opened) != expect_authorization:
        fail(f"authorization asked {len(opened)} times, expected {int(expect_authorization)}")
    if "test-tool" not in out:
        fail(f"no test-tool listed: {out}")
    return "".join(err_lines)


run(expect_authorization=True)
tokens = os.path.join(config, "ai-tool", "oauth")
files = os.listdir(tokens)
if len(files) != 1:
    fail(f"expected one token file, found {files}")
token_file = os.path.join(tokens, files[0])
if stat.S_IMODE(os.stat(token_file).st_mode) != 0o600:
    fail(f"the token file's mode is {oct(os.stat(token_file).st_mode)}")
if stat.S_IMODE(os.stat(tokens).st_mode) != 0o700:
    fail(f"the token directory's mode is {oct(os.stat(tokens).st_mode)}")
# Again: the kept token, no authorization.
run(expect_authorization=False)
# Readable by others: refused, naming the mode.
os.chmod(token_file, 0o644)
refused = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
if refused.returncode == 0 or "mode 644" not in refused.stderr:
    fail(f"a token file others may read was used: {refused.returncode} {refused.stderr}")
print("cli_oauth: authorized once, the kept token used again, a readable file refused")
