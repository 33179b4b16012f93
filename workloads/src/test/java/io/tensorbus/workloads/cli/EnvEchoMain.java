package io.tensorbus.workloads.cli;

import io.tensorbus.distributed.Distributed;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Arrays;

/**
 * A child for {@link LauncherTest}: prints the launch environment, whether the rendezvous port accepts a
 * connection, its arguments, then many numbered lines on stdout and stderr (to show that lines of
 * different ranks never mix), and exits 0; with {@code fail-first=R}, rank R exits with 5 in the first attempt.
 */
public final class EnvEchoMain {
    private EnvEchoMain() {
    }

    /** Prints and exits; the argument {@code lines=N} sets how many numbered lines to print. */
    public static void main(String[] args) {
        String rank = env("RANK");
        for (String name : new String[] {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                "MASTER_ADDR", "MASTER_PORT", "TENSORBUS_STORE_HOSTED", "TENSORBUS_SECRET", "TENSORBUS_LAUNCHER_PID",
                "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS"}) {
            System.out.println("env " + name + "=" + env(name));
        }
        System.out.println("args " + Arrays.toString(args));
        System.out.println("store reachable=" + reachable(env("MASTER_ADDR"), env("MASTER_PORT")));
        int lines = Arrays.stream(args).filter(a -> a.startsWith("lines=")).mapToInt(a ->
                Integer.parseInt(a.substring(6)))
                .findFirst().orElse(0);
        String padding = "x".repeat(200);
        for (int i = 0; i < lines; i++) {
            System.out.println("line " + i + " of rank " + rank + " " + padding);
            System.err.println("err " + i + " of rank " + rank + " " + padding);
        }
        System.err.println("stderr of rank " + rank + " é");
        // fail-first=R: rank R exits with 5 in the first attempt, to be restarted.
        boolean failFirst = Arrays.asList(args).contains("fail-first=" + rank);
        if (failFirst && "0".equals(env("TORCHELASTIC_RESTART_COUNT"))) {
            System.exit(5);
        }
    }

    private static String env(String name) {
        // As a program that may run as a rank thread reads it.
        String v = Distributed.environment().get(name);
        return v == null ? "unset" : v;
    }

    private static boolean reachable(String host, String port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, Integer.parseInt(port)), 2000);
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
