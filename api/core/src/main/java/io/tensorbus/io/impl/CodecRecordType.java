package io.tensorbus.io.impl;

import java.lang.reflect.Constructor;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;

/**
 * A registered record: its components' accessors in declaration order and its canonical constructor,
 * looked up and made accessible once at registration.
 */
public final class CodecRecordType implements CodecType {
    private final String name;
    private final Class<?> type;
    private final String[] componentNames;
    private final Class<?>[] componentTypes;
    private final Method[] accessors;
    private final Constructor<?> constructor;

    private CodecRecordType(String name, Class<?> type, RecordComponent[] components, Constructor<?> constructor) {
        this.name = name;
        this.type = type;
        this.constructor = constructor;
        int n = components.length;
        this.componentNames = new String[n];
        this.componentTypes = new Class<?>[n];
        this.accessors = new Method[n];
        for (int i = 0; i < n; i++) {
            componentNames[i] = components[i].getName();
            componentTypes[i] = components[i].getType();
            accessors[i] = components[i].getAccessor();
        }
    }

    /**
     * Looks up the accessors and canonical constructor of a record class.
     *
     * @throws IllegalArgumentException when {@code type} is not a record, or its package is in a named
     *     module that does not open it to tensorbus
     */
    public static CodecRecordType of(String name, Class<?> type) {
        RecordComponent[] components = type.getRecordComponents();
        if (components == null) {
            throw new IllegalArgumentException(type.getName() + " is not a record");
        }
        Class<?>[] types = new Class<?>[components.length];
        for (int i = 0; i < types.length; i++) {
            types[i] = components[i].getType();
        }
        try {
            Constructor<?> ctor = type.getDeclaredConstructor(types);
            CodecRecordType t = new CodecRecordType(name, type, components, ctor);
            // Records are often nested and package-private; reflection needs the access check off.
            ctor.setAccessible(true);
            for (Method m : t.accessors) {
                m.setAccessible(true);
            }
            return t;
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException("record " + type.getName() + " has no canonical constructor", e);
        } catch (InaccessibleObjectException e) {
            throw new IllegalArgumentException("record " + type.getName() + " is in module "
                    + type.getModule().getName() + " which does not open package " + type.getPackageName()
                    + " to tensorbus; add 'opens " + type.getPackageName() + "' to its module-info", e);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Class<?> type() {
        return type;
    }

    @Override
    public String kind() {
        return "record";
    }

    /** The number of components. */
    public int arity() {
        return accessors.length;
    }

    /** The name of component {@code i}, for messages. */
    public String componentName(int i) {
        return componentNames[i];
    }

    /** The declared type of component {@code i}. */
    public Class<?> componentType(int i) {
        return componentTypes[i];
    }

    /**
     * The component values of a record of this type, in declaration order.
     *
     * @throws IllegalArgumentException when an accessor throws
     */
    public Object[] components(Object record) {
        Object[] values = new Object[accessors.length];
        for (int i = 0; i < values.length; i++) {
            try {
                values[i] = accessors[i].invoke(record);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException("accessor " + accessors[i] + " is not accessible", e);
            } catch (InvocationTargetException e) {
                throw new IllegalArgumentException("accessor " + componentNames[i] + "() of record " + type.getName()
                        + " threw " + e.getCause(), e.getCause());
            }
        }
        return values;
    }

    /**
     * Calls the canonical constructor.
     *
     * @throws InvocationTargetException when the constructor throws (a compact constructor's check)
     */
    public Object construct(Object[] values) throws InvocationTargetException {
        try {
            return constructor.newInstance(values);
        } catch (InstantiationException | IllegalAccessException e) {
            throw new IllegalStateException("cannot call the constructor of record " + type.getName(), e);
        }
    }
}
