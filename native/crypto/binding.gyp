{
  "targets": [
    {
      "target_name": "pgveil_crypto",
      "sources": ["addon.c", "napi_checks.c", "ff1.c", "ff1_prf.c", "ff1_bytes.c", "ff1_digits.c", "digests.c", "token_seal.c", "token_unseal.c"],
      "defines": ["NAPI_VERSION=8", "OPENSSL_API_COMPAT=0x30000000L"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-std=c11", "-fvisibility=hidden"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O2", "-Wall", "-Wextra", "-std=c11", "-fvisibility=hidden"] }
    }
  ]
}
