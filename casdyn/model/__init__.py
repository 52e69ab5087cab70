"""From a robot description to the immutable model the algorithms run on.

``urdf``, ``srdf`` and ``mjcf`` read the files; ``build`` turns a description into the
kinematic tree of ``tree`` (:class:`~casdyn.model.tree.Model`: joints, bodies, inertias,
gravity) with fixed links merged and joint axes turned onto z; ``joints`` (with the base
class in ``joint_type``) is the one place that knows what each joint type does,
``joint_state`` a joint evaluated at its coordinates and ``articulation`` its step of ABA;
``reframe`` and ``grouping`` derive the sparser, equivalent models the algorithms use;
``locking`` fixes joints of a description; ``shipped`` finds the robots that come with
casdyn."""
