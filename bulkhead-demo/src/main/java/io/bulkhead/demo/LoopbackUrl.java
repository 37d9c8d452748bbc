package io.bulkhead.demo;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * An {@code http://} URL on this machine's loopback interface, with an explicit port: the demo
 * never sends its load anywhere else.
 */
final class LoopbackUrl implements ITypeConverter<URI> {

  @Override
  public URI convert(String value) {
    return parse(value);
  }

  static URI parse(String value) {
    URI uri;
    try {
      uri = new URI(value.trim());
    } catch (URISyntaxException e) {
      throw notLoopback(value);
    }
    if (!"http".equalsIgnoreCase(uri.getScheme())
        || uri.getHost() == null
        || uri.getPort() < 0
        || uri.getRawUserInfo() != null
        || uri.getRawQuery() != null
        || (uri.getRawPath() != null
            && !uri.getRawPath().isEmpty()
            && !uri.getRawPath().equals("/"))) {
      throw notLoopback(value);
    }
    String host = uri.getHost();
    if (!isLoopback(host)) {
      throw new TypeConversionException(
          "'"
              + value
              + "' is not on this machine: only loopback"
              + " addresses (127.0.0.1, localhost, [::1]) are used");
    }
    return URI.create("http://" + uri.getHost() + ":" + uri.getPort());
  }

  private static boolean isLoopback(String host) {
    if (host.toLowerCase(Locale.ROOT).equals("localhost")) {
      return true;
    }
    String literal =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    // Only literals are resolved here, so no name lookup ever leaves the machine.
    if (!literal.matches("[0-9.]+") && !literal.contains(":")) {
      return false;
    }
    try {
      return InetAddress.getByName(literal).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  private static TypeConversionException notLoopback(String value) {
    return new TypeConversionException(
        "'" + value + "' is not an http URL with a host and a port, like http://127.0.0.1:4001");
  }
}
