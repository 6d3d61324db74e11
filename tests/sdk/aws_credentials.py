"""Prints, as one JSON line, the AWS credentials and region botocore finds in this process's
environment: {"access_key", "secret_key", "token", "region"}, or {"error"} when it raises, or
{"none": true} when it finds none. An argument names the profile, as `Session(profile=...)`
(the AWS CLI's --profile) does.

tool-providers/tests/aws_credentials.rs runs it beside `AwsCredentialChain` over the same variables,
files, credential_process and metadata endpoints, and compares the two."""

import json
import sys

import botocore.session


def main():
    profile = sys.argv[1] if len(sys.argv) > 1 else None
    try:
        session = botocore.session.Session(profile=profile)
        credentials = session.get_credentials()
        if credentials is None:
            print(json.dumps({"none": True}))
            return
        frozen = credentials.get_frozen_credentials()
        print(json.dumps({
            "access_key": frozen.access_key,
            "secret_key": frozen.secret_key,
            "token": frozen.token,
            "region": session.get_config_variable("region"),
        }))
    except Exception as error:  # noqa: BLE001 - any failure is the answer
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))


main()
