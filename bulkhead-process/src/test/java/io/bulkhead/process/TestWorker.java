package io.bulkhead.process;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The worker main of the tests, run in child JVMs: with the argument {@code exit N} it exits with N
 * at once; otherwise it prints {@code ready} and reads commands — {@code allocate} fills megabytes
 * that it never frees until the process dies — and exits when its standard input ends (its parent
 * is gone).
 */
public final class TestWorker {

  static final String READY = "ready";
  static final String ALLOCATE = "allocate";
  private static final int CHUNK_BYTES = 1024 * 1024;

  private TestWorker() {}

  public static void main(String[] args) throws IOException {
    if (args.length == 2 && args[0].equals("exit")) {
      System.exit(Integer.parseInt(args[1]));
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
      }
    }
    System.exit(0);
  }
}
