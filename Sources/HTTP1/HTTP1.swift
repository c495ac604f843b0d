/// Sans-IO HTTP/1.1 codec. See HTTP1Parser.swift.
public enum HTTP1 {}
