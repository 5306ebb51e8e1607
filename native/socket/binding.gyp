{
  "targets": [
    {
      "target_name": "pgveil_socket",
      "sources": ["socket_io.c", "socket_napi.c"],
      "defines": ["NAPI_VERSION=8"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-std=c11", "-fvisibility=hidden"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O2", "-Wall", "-Wextra", "-std=c11", "-fvisibility=hidden"] }
    }
  ]
}
