"""From a robot description to the immutable model the algorithms run on.

``urdf`` reads the file into a :class:`~casdyn.model.urdf.RobotDescription`; ``tree``
builds the kinematic tree (:class:`~casdyn.model.tree.Model`: joints, bodies, inertias,
gravity) with fixed links merged; ``joints`` is the one place that knows what each joint
type does; ``reframe`` and ``grouping`` derive the sparser, equivalent models the
algorithms use; ``locking`` fixes joints of a description; ``shipped`` finds the robots
that come with casdyn."""
