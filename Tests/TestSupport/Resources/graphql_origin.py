#!/usr/bin/env python3
"""A GraphQL origin for DevProxy's tests: plain HTTP/1.1 on 127.0.0.1, a real schema executed by
graphql-core. POST /graphql takes `application/json` (one request or a batch, an array) or an
`application/graphql` document; GET /graphql takes `?query=&operationName=&variables=`. The
`like` mutation fails with a GraphQL error (`extensions.code` FORBIDDEN) under HTTP 200, as
servers answer. POST /search answers any JSON with `{"results": []}`: JSON that is no GraphQL.
Prints its port on the first line of stdout; stops when stdin closes.

Usage: graphql_origin.py
"""
import http.server, json, sys, threading, urllib.parse

from graphql import GraphQLError, build_schema, graphql_sync

SCHEMA = build_schema("""
    type User { id: ID! name: String }
    type Post { id: ID! title: String }
    type Query { user(id: ID!): User feed: [Post] search(text: String): String }
    type Mutation { like(id: Int): Boolean }
""")


def like(info, id=None):
    raise GraphQLError("not allowed to like %s" % id, extensions={"code": "FORBIDDEN"})


ROOT = {
    "user": lambda info, id: {"id": id, "name": "Ana"},
    "feed": lambda info: [{"id": "p1", "title": "Hello"}],
    "search": lambda info, text=None: "found %s" % text,
    "like": like,
}


def execute(request):
    result = graphql_sync(SCHEMA, request.get("query") or "", root_value=ROOT,
                          variable_values=request.get("variables"), operation_name=request.get("operationName"))
    return result.formatted


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, value):
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/graphql-response+json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        parts = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(parts.query))
        variables = json.loads(query["variables"]) if query.get("variables") else None
        self.answer(execute({"query": query.get("query"), "operationName": query.get("operationName"),
                             "variables": variables}))

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path.startswith("/search"):
            self.answer({"results": []})
            return
        if self.headers.get("Content-Type", "").startswith("application/graphql"):
            self.answer(execute({"query": body.decode()}))
            return
        request = json.loads(body)
        self.answer([execute(entry) for entry in request] if isinstance(request, list) else execute(request))


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
