package io.bulkhead.process;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The worker main of the tests, run in child JVMs. With the arguments {@code exit N} it exits with
 * N at once; with {@code flood N} it writes N bytes of {@code x} without a newline, then {@code
 * \nflooded\n}, and exits with 0. Otherwise it prints {@code ready} and reads commands — {@code
 * allocate} fills megabytes that it never frees until the process dies, {@code spawn} starts {@code
 * sleep 611} and {@code sh -c "sleep 612 & sleep 613"} and prints {@code spawned} once the three
 * sleeps run, {@code exit N} exits with N — and exits when its standard input ends (its parent is
 * gone).
 */
public final class TestWorker {

  static final String READY = "ready";
  static final String ALLOCATE = "allocate";
  static final String SPAWN = "spawn";
  static final String SPAWNED = "spawned";
  static final String FLOODED = "flooded";
  private static final int CHUNK_BYTES = 1024 * 1024;

  private TestWorker() {}

  public static void main(String[] args) throws IOException, InterruptedException {
    if (args.length == 2 && args[0].equals("exit")) {
      System.exit(Integer.parseInt(args[1]));
    }
    if (args.length == 2 && args[0].equals("flood")) {
      flood(Long.parseLong(args[1]));
      System.exit(0);
    }
    System.out.println(READY);
    System.out.flush();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    List<byte[]> kept = new ArrayList<>();
    for (String line; (line = in.readLine()) != null; ) {
      if (line.equals(ALLOCATE)) {
        while (true) { // until the ceiling ends the process
          byte[] chunk = new byte[CHUNK_BYTES];
          Arrays.fill(chunk, (byte) 1); // touch the pages so the kernel charges them
          kept.add(chunk);
        }
      } else if (line.equals(SPAWN)) {
        new ProcessBuilder("sleep", "611").start();
        new ProcessBuilder("sh", "-c", "sleep 612 & sleep 613").start();
        while (sleeps() < 3) { // until the shell has started both of its own
          Thread.sleep(1);
        }
        System.out.println(SPAWNED);
        System.out.flush();
      } else if (line.startsWith("exit ")) {
        System.exit(Integer.parseInt(line.substring("exit ".length())));
      }
    }
    System.exit(0);
  }

  /** How many of this process's descendants run {@code sleep}. */
  static long sleeps() {
    return ProcessHandle.current()
        .descendants()
        .filter(p -> p.info().command().orElse("").endsWith("/sleep"))
        .count();
  }

  /**
   * Writes {@code bytes} of 'x' straight to the standard output's descriptor, a megabyte a time.
   */
  private static void flood(long bytes) throws IOException {
    byte[] chunk = new byte[CHUNK_BYTES];
    Arrays.fill(chunk, (byte) 'x');
    OutputStream out = new FileOutputStream(FileDescriptor.out);
    for (long left = bytes; left > 0; left -= chunk.length) {
      out.write(chunk, 0, (int) Math.min(chunk.length, left));
    }
    out.write(("\n" + FLOODED + "\n").getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }
}
