package io.tensorbus.distributed.rpc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.function.Function;

/**
 * The typed proxies of an {@link RRef} and their other half on the owner. A call names the interface, the
 * method and its parameter types; the owner looks the interface up among those the value's class
 * implements (it never loads a class by a name from the network) and calls the method on the value.
 */
final class RRefProxies {
    private RRefProxies() {
    }

    /** Runs one proxied method call. */
    interface Invoker {
        Object invoke(Method method, Object[] args) throws Exception;
    }

    /** A method call recorded for {@code rpcAsync} / {@code remote}. */
    record Recorded(Method method, Object[] args) {
    }

    /** A proxy of {@code type} whose interface methods go to {@code invoker}; {@code rref} stays reachable. */
    static <I> I sync(Class<I> type, Invoker invoker, RRef<?> rref) {
        checkInterface(type);
        InvocationHandler h = (proxy, m, args) -> {
            if (m.getDeclaringClass() == Object.class) {
                return switch (m.getName()) {
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    default -> type.getSimpleName() + " proxy of " + rref;
                };
            }
            return invoker.invoke(m, args == null ? new Object[0] : args);
        };
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h));
    }

    /**
     * The one method of {@code type} that {@code call} calls on a recorder.
     *
     * @throws IllegalArgumentException when {@code type} is not an interface or {@code call} calls no method
     *     of it or more than one
     */
    static <I> Recorded record(Class<I> type, Function<? super I, ?> call) {
        checkInterface(type);
        if (call == null) {
            throw new NullPointerException("call");
        }
        List<Recorded> calls = new ArrayList<>();
        InvocationHandler h = (proxy, m, args) -> {
            if (m.getDeclaringClass() != Object.class) {
                calls.add(new Recorded(m, args == null ? new Object[0] : args.clone()));
            }
            return zero(m.getReturnType());
        };
        call.apply(type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h)));
        if (calls.size() != 1) {
            throw new IllegalArgumentException("the lambda must call exactly one method of " + type.getName()
                    + " on the object it is given; it called " + calls.size());
        }
        return calls.get(0);
    }

    /** The INVOKE message: {@code [id, timeout ms, interface, method, parameter types, args...]}. */
    static Object[] message(RRefId id, Duration timeout, Method method, Object[] args) {
        List<Object> m = new ArrayList<>(List.of(id, timeout.toMillis(), method.getDeclaringClass().getName(),
                method.getName(), Arrays.stream(method.getParameterTypes()).map(Class::getName).toList()));
        m.addAll(Arrays.asList(args));
        return m.toArray();
    }

    /**
     * On the owner: calls {@code method} of {@code type} on {@code value}.
     *
     * @throws IllegalArgumentException when the value does not implement {@code type} or it has no such
     *     method; otherwise what the method threw
     */
    static Object invoke(Object value, String type, String method, List<String> parameters, List<Object> args)
            throws Exception {
        Class<?> iface = implemented(value, type);
        Method m = Arrays.stream(iface.getMethods())
                .filter(x -> x.getName().equals(method) && parameterNames(x).equals(parameters))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException(type + " has no method " + method + parameters));
        m.setAccessible(true);
        try {
            return m.invoke(value, args.toArray());
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Exception x) {
                throw x;
            }
            throw e;
        }
    }

    private static Class<?> implemented(Object value, String type) {
        Deque<Class<?>> unvisited = new ArrayDeque<>();
        for (Class<?> c = value == null ? null : value.getClass(); c != null; c = c.getSuperclass()) {
            unvisited.addAll(Arrays.asList(c.getInterfaces()));
        }
        while (!unvisited.isEmpty()) {
            Class<?> i = unvisited.pop();
            if (i.getName().equals(type)) {
                return i;
            }
            unvisited.addAll(Arrays.asList(i.getInterfaces()));
        }
        throw new IllegalArgumentException("the value is "
                + (value == null ? "null" : "a " + value.getClass().getName())
                + ", which does not implement " + type);
    }

    private static List<String> parameterNames(Method m) {
        return Arrays.stream(m.getParameterTypes()).map(Class::getName).toList();
    }

    private static void checkInterface(Class<?> type) {
        if (type == null) {
            throw new NullPointerException("type");
        }
        if (!type.isInterface()) {
            throw new IllegalArgumentException(type.getName() + " is not an interface: RRef proxies implement an"
                    + " interface of the remote value");
        }
    }

    private static Object zero(Class<?> t) {
        if (!t.isPrimitive() || t == void.class) {
            return null;
        }
        if (t == boolean.class) {
            return false;
        }
        if (t == char.class) {
            return (char) 0;
        }
        return switch (t.getName()) {
            case "byte" -> (byte) 0;
            case "short" -> (short) 0;
            case "int" -> 0;
            case "long" -> 0L;
            case "float" -> 0f;
            default -> 0d;
        };
    }
}
