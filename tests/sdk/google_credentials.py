"""Prints, as one JSON line, what Google's own libraries do with this process's environment.

  token                     the access token google-auth's Application Default Credentials
                            get (`google.auth.default` with the cloud-platform scope, then a
                            refresh), its project and quota project: {"token", "project",
                            "quota_project"}
  vertex PROJECT LOCATION URL
                            one generate_content call of google-genai's client on Vertex AI
                            (`vertexai=True`) to a server at URL: {"text"}
  vertex-express KEY URL     the same in Vertex AI's express mode, with an API key
  anthropic-vertex REGION URL
                            one messages.create call of anthropic's AnthropicVertex client
                            (its project from ANTHROPIC_VERTEX_PROJECT_ID) to a server at URL:
                            {"text"}

{"error"} when it raises. tool-providers/tests/google_credentials.rs runs it beside
`GoogleCredentials` and `GeminiModel::vertex_ai` over the same variables, files and local
servers, and compares the two."""

import json
import os
import sys


def redirect_token_endpoint():
    """Sends what google-auth's own transport addresses to Google's token endpoint to
    AI_TOOL_TEST_OAUTH_ROOT instead (google-auth always sends user credentials there), for
    every client here (google-auth, google-genai, anthropic's AnthropicVertex): the requests
    are theirs, only the host is the test's."""
    root = os.environ.get("AI_TOOL_TEST_OAUTH_ROOT")
    if not root:
        return
    import google.auth.transport.requests as transport

    google_endpoint = "https://oauth2.googleapis.com"
    original = transport.Request.__call__

    def call(self, url, *args, **kwargs):
        if url.startswith(google_endpoint + "/"):
            url = root + url[len(google_endpoint):]
        return original(self, url, *args, **kwargs)

    transport.Request.__call__ = call


def main():
    try:
        redirect_token_endpoint()
        if sys.argv[1] == "token":
            import google.auth
            import google.auth.transport.requests

            credentials, project = google.auth.default(
                scopes=["https://www.googleapis.com/auth/cloud-platform"]
            )
            credentials.refresh(google.auth.transport.requests.Request())
            print(json.dumps({
                "token": credentials.token,
                "project": project,
                "quota_project": getattr(credentials, "quota_project_id", None),
            }))
        elif sys.argv[1] == "anthropic-vertex":
            from anthropic import AnthropicVertex

            region, url = sys.argv[2:4]
            client = AnthropicVertex(region=region, base_url=url + "/v1")
            answer = client.messages.create(
                model="claude-sonnet-4-5@20250929", max_tokens=64,
                messages=[{"role": "user", "content": "hi"}],
            )
            print(json.dumps({"text": answer.content[0].text}))
        elif sys.argv[1] == "vertex-express":
            from google import genai

            key, url = sys.argv[2:4]
            client = genai.Client(vertexai=True, api_key=key, http_options={"base_url": url})
            answer = client.models.generate_content(model="gemini-2.5-flash", contents="hi")
            print(json.dumps({"text": answer.text}))
        else:
            from google import genai

            project, location, url = sys.argv[2:5]
            client = genai.Client(
                vertexai=True, project=project, location=location,
                http_options={"base_url": url},
            )
            answer = client.models.generate_content(model="gemini-2.5-flash", contents="hi")
            print(json.dumps({"text": answer.text}))
    except Exception as error:  # noqa: BLE001 - any failure is the answer
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))


main()
