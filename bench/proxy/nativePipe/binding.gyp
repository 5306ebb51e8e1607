{
  "targets": [
    {
      "target_name": "native_pipe",
      "sources": ["nativePipe.c"],
      "defines": ["NAPI_VERSION=8"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-std=c11"]
    }
  ]
}
