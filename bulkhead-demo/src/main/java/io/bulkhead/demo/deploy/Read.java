package io.bulkhead.demo.deploy;

/** A value read from a deployment file, with where it was read: file, line and dotted key. */
record Read<T>(T value, String text, String file, int line, String key) {}
