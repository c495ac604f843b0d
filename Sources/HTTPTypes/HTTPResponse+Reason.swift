extension HTTPResponse {
    /// RFC 9110 §15's reason phrase for `status`, `Error` for one not listed: what an HTTP/1.1
    /// status line gets when the response came without one (from HTTP/2, or from DevProxy).
    public static func standardReason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 409: return "Conflict"
        case 413: return "Content Too Large"
        case 421: return "Misdirected Request"
        case 407: return "Proxy Authentication Required"
        case 408: return "Request Timeout"
        case 414: return "URI Too Long"
        case 416: return "Range Not Satisfiable"
        case 417: return "Expectation Failed"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        default: return "Error"
        }
    }
}
