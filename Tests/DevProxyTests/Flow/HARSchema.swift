/// A JSON Schema (draft 7) for HAR 1.2, written from the spec
/// (http://www.softwareishard.com/blog/har-12-spec/): every required field with its type,
/// optional fields typed, and — as the spec says — only fields starting with `_` beyond those.
enum HARSchema {
    static let json = #"""
    {
      "$schema": "http://json-schema.org/draft-07/schema#",
      "type": "object", "required": ["log"], "additionalProperties": false,
      "properties": {"log": {"$ref": "#/definitions/log"}},
      "definitions": {
        "log": {
          "type": "object", "required": ["version", "creator", "entries"],
          "patternProperties": {"^_": {}}, "additionalProperties": false,
          "properties": {
            "version": {"type": "string", "const": "1.2"},
            "creator": {"$ref": "#/definitions/creator"},
            "browser": {"$ref": "#/definitions/creator"},
            "pages": {"type": "array", "items": {"$ref": "#/definitions/page"}},
            "entries": {"type": "array", "items": {"$ref": "#/definitions/entry"}},
            "comment": {"type": "string"}
          }
        },
        "creator": {
          "type": "object", "required": ["name", "version"],
          "patternProperties": {"^_": {}}, "additionalProperties": false,
          "properties": {"name": {"type": "string"}, "version": {"type": "string"}, "comment": {"type": "string"}}
        },
        "page": {
          "type": "object", "required": ["startedDateTime", "id", "title", "pageTimings"],
          "patternProperties": {"^_": {}}, "additionalProperties": false,
          "properties": {
            "startedDateTime": {"$ref": "#/definitions/dateTime"}, "id": {"type": "string"},
            "title": {"type": "string"}, "pageTimings": {"type": "object"}, "comment": {"type": "string"}
          }
        },
        "dateTime": {
          "type": "string",
          "pattern": "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$"
        },
        "entry": {
          "type": "object",
          "required": ["startedDateTime", "time", "request", "response", "cache", "timings"],
          "patternProperties": {"^_": {}}, "additionalProperties": false,
          "properties": {
            "pageref": {"type": "string"},
            "startedDateTime": {"$ref": "#/definitions/dateTime"},
            "time": {"type": "number", "minimum": 0},
            "request": {"$ref": "#/definitions/request"},
            "response": {"$ref": "#/definitions/response"},
            "cache": {"$ref": "#/definitions/cache"},
            "timings": {"$ref": "#/definitions/timings"},
            "serverIPAddress": {"type": "string"},
            "connection": {"type": "string"},
            "comment": {"type": "string"}
          }
        },
        "request": {
          "type": "object",
          "required": ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"],
          "patternProperties": {"^_": {}}, "additionalProperties": false,
          "properties": {
            "method": {"type": "string"}, "url": {"type": "string"}, "httpVersion": {"type": "string"},
            "cookies": {"type": "array", "items": {"$ref": "#/definitions/cookie"}},
            "headers": {"type": "array", "items": {"$ref": "#/definitions/record"}},
            "queryString": {"type": "array", "items": {"$ref": "#/definitions/record"}},
            "postData": {"$ref": "#/definitions/postData"},
            "headersSize": {"type": "integer"}, "bodySize": {"type": "integer"},
            "comment": {"type": "string"}
          }
        },
        "response": {
          "type": "object",
          "required": ["status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL",
                       "headersSize", "bodySize"],
          "patternProperties": {"^_": {}}, "additionalProperties": false,
          "properties": {
            "status": {"type": "integer"}, "statusText": {"type": "string"}, "httpVersion": {"type": "string"},
            "cookies": {"type": "array", "items": {"$ref": "#/definitions/cookie"}},
            "headers": {"type": "array", "items": {"$ref": "#/definitions/record"}},
            "content": {"$ref": "#/definitions/content"},
            "redirectURL": {"type": "string"},
            "headersSize": {"type": "integer"}, "bodySize": {"type": "integer"},
            "comment": {"type": "string"}
          }
        },
        "cookie": {
          "type": "object", "required": ["name", "value"],
          "patternProperties": {"^_": {}}, "additionalProperties": false,
          "properties": {
            "name": {"type": "string"}, "value": {"type": "string"}, "path": {"type": "string"},
            "domain": {"type": "string"}, "expires": {"type": ["string", "null"]},
            "httpOnly": {"type": "boolean"}, "secure": {"type": "boolean"}, "comment": {"type": "string"}
          }
        },
        "record": {
          "type": "object", "required": ["name", "value"],
          "patternProperties": {"^_": {}}, "additionalProperties": false,
          "properties": {"name": {"type": "string"}, "value": {"type": "string"}, "comment": {"type": "string"}}
        },
        "postData": {
          "type": "object", "required": ["mimeType"],
          "patternProperties": {"^_": {}}, "additionalProperties": false,
          "properties": {
            "mimeType": {"type": "string"}, "text": {"type": "string"},
            "params": {"type": "array", "items": {
              "type": "object", "required": ["name"],
              "patternProperties": {"^_": {}}, "additionalProperties": false,
              "properties": {
                "name": {"type": "string"}, "value": {"type": "string"}, "fileName": {"type": "string"},
                "contentType": {"type": "string"}, "comment": {"type": "string"}
              }
            }},
            "comment": {"type": "string"}
          }
        },
        "content": {
          "type": "object", "required": ["size", "mimeType"],
          "patternProperties": {"^_": {}}, "additionalProperties": false,
          "properties": {
            "size": {"type": "integer"}, "compression": {"type": "integer"}, "mimeType": {"type": "string"},
            "text": {"type": "string"}, "encoding": {"type": "string"}, "comment": {"type": "string"}
          }
        },
        "cache": {
          "type": "object", "patternProperties": {"^_": {}}, "additionalProperties": false,
          "properties": {
            "beforeRequest": {"type": ["object", "null"]}, "afterRequest": {"type": ["object", "null"]},
            "comment": {"type": "string"}
          }
        },
        "timings": {
          "type": "object", "required": ["send", "wait", "receive"],
          "patternProperties": {"^_": {}}, "additionalProperties": false,
          "properties": {
            "blocked": {"type": "number", "minimum": -1}, "dns": {"type": "number", "minimum": -1},
            "connect": {"type": "number", "minimum": -1}, "ssl": {"type": "number", "minimum": -1},
            "send": {"type": "number", "minimum": 0}, "wait": {"type": "number", "minimum": 0},
            "receive": {"type": "number", "minimum": 0}, "comment": {"type": "string"}
          }
        }
      }
    }
    """#
}
