"""Checks a request's AWS Signature Version 4 against botocore's own signer.

    python3 tests/sdk/check_sigv4.py REQUEST.json

REQUEST.json holds a request as a server received it: `method`, `url`, `headers` (every header
received, lower-case names), `body_hex`, and what the signer knows: `region`, `service`,
`access_key`, `secret_key` and, for temporary credentials, `token`. botocore signs the same
request, at the time of its `x-amz-date`, over the headers our `Authorization` says it signed,
and the two `Authorization` headers must be equal. The signed headers must include `host`,
`x-amz-date` and `content-type`, and `x-amz-security-token` with a token. Prints what differs
and exits 1 on a mismatch.
"""

import datetime
import json
import sys
from unittest import mock

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def main(path):
    with open(path, encoding="utf-8") as file:
        request = json.load(file)
    headers = request["headers"]
    ours = headers.get("authorization", "")
    prefix = "AWS4-HMAC-SHA256 "
    if not ours.startswith(prefix):
        print(f"FAIL the Authorization header is not SigV4: {ours!r}")
        return 1
    fields = dict(part.strip().split("=", 1) for part in ours[len(prefix):].split(","))
    signed = fields["SignedHeaders"].split(";")
    needed = {"host", "x-amz-date", "content-type"}
    if request.get("token"):
        needed.add("x-amz-security-token")
    missing = needed - set(signed)
    if missing:
        print(f"FAIL these headers are not signed: {sorted(missing)}")
        return 1
    if headers.get("x-amz-security-token", None) != request.get("token"):
        print("FAIL the session token sent is not the credentials' token")
        return 1
    when = datetime.datetime.strptime(headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    when = when.replace(tzinfo=datetime.timezone.utc)
    theirs = AWSRequest(
        method=request["method"],
        url=request["url"],
        data=bytes.fromhex(request["body_hex"]),
        headers={name: headers[name] for name in signed if name != "x-amz-security-token"},
    )
    credentials = Credentials(request["access_key"], request["secret_key"], request.get("token"))
    with mock.patch("botocore.auth.get_current_datetime", return_value=when):
        SigV4Auth(credentials, request["service"], request["region"]).add_auth(theirs)
    expected = theirs.headers["Authorization"]
    if expected != ours:
        print(f"FAIL the signatures differ:\n  ours:     {ours}\n  botocore: {expected}")
        return 1
    print(f"ok   {ours}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
